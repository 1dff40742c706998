import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { checkpointFold } from '../../replay/checkpointStarts.ts';
import { deciders } from '../../replay/deciders.ts';
import { projections } from '../../runtime/folds/keeper/registry.ts';
import { type ArchiveStep, archiveOnce, recoverArchives } from '../../runtime/store/sqlite/archiveSegments.ts';
import { openSqliteStore } from '../../runtime/store/sqlite/sqliteEventStore.ts';
import { scenarioCopy } from '../replay/scenarioLog.ts';
import { builtScript } from '../support/builtScripts.ts';
import { runInProcess } from '../support/inProcessCli.ts';

const DAY_MS = 86_400_000;
const checkpoint = checkpointFold({ deciders, projections });

type Row = [number, string, number, string, string, number, number | null, string];

/** Every row of the history, live and archived, as SQLite holds them: what no step may lose or change. */
function history(path: string): Row[] {
  const folder = join(dirname(path), 'archive');
  const files = existsSync(folder) ? readdirSync(folder).filter((f) => f.endsWith('.db') && !f.startsWith('.')) : [];
  const rows = new Map<number, Row>();
  for (const file of [...files.map((f) => join(folder, f)), path]) {
    const db = new Database(file, { readonly: true });
    for (const row of db.prepare('SELECT seq, stream, version, type, data, at, cause, actor FROM events ORDER BY seq').raw().all() as Row[]) {
      const seen = rows.get(row[0]);
      if (seen) expect(seen).toEqual(row);
      rows.set(row[0], row);
    }
    db.close();
  }
  return [...rows.values()].sort((a, b) => a[0] - b[0]);
}

function liveCount(path: string): number {
  const db = new Database(path, { readonly: true });
  const n = db.prepare('SELECT count(*) FROM events').pluck().get() as number;
  db.close();
  return n;
}

/** The scenario log, and a clock ten days after its last event: all its runs ended long ago. */
async function oldLog(): Promise<{ path: string; now: number; rows: Row[] }> {
  const path = scenarioCopy();
  const store = await openSqliteStore(path);
  const last = store.db.prepare('SELECT max(at) FROM events').pluck().get() as number;
  await store.close();
  return { path, now: last + 10 * DAY_MS, rows: history(path) };
}

/** The history without the retention's own records. */
const withoutRecords = (rows: Row[]) => rows.filter((r) => !r[3].startsWith('log.'));

describe('retention: --retain-days moves ended runs to sealed segments, and every reader still sees them', () => {
  it('archives what ended more than N days ago; reads, audit and replay see the one history', async () => {
    const { path, now, rows } = await oldLog();
    const store = await openSqliteStore(path);
    const all = await store.readAll(0, 100_000);
    const someRun = all.find((e) => e.type === 'board.run.submitted')!.data.runId as string;
    const before = { entity: await store.readEntity(`run:${someRun}`), lane: await store.readStream(all[0]!.stream) };
    const result = await archiveOnce(store, path, { retainDays: 2, now, checkpoint });
    expect(result).not.toBeNull();
    expect(existsSync(join(dirname(path), 'archive', result!.file))).toBe(true);
    // The scenario's session s-a1 never closed: its history, and all after its first event, stays live.
    const firstOfOpen = all.find((e) => e.stream.endsWith('session:s-a1') || (e.data as { sessionId?: string }).sessionId === 's-a1')!.seq;
    expect(result).toMatchObject({ from: 1, to: firstOfOpen - 1, events: firstOfOpen - 1 });
    expect(liveCount(path)).toBe(rows.length - result!.events + 1);
    expect(withoutRecords(history(path))).toEqual(rows);
    // The store reads through the segment: the whole log, an entity, a stream, a stream's version.
    expect((await store.readAll(0, 100_000)).slice(0, all.length)).toEqual(all);
    expect(await store.readEntity(`run:${someRun}`)).toEqual(before.entity);
    expect(await store.readStream(all[0]!.stream)).toEqual(before.lane);
    expect(await store.streamVersion(all[0]!.stream)).toBe(before.lane.at(-1)!.version);
    expect(await store.entityIdsStartingWith('run', someRun.slice(0, 3), 10)).toContain(someRun);
    // The live log keeps the states of every fold at the cut: its starting checkpoint (the first segment needs none).
    const folds = store.db.prepare('SELECT name FROM starting_checkpoint WHERE seq = ? ORDER BY name').pluck().all(result!.to);
    expect(folds).toEqual(expect.arrayContaining(['board', 'queue', 'decider:run', 'decider:session']));
    expect(store.db.prepare('SELECT count(*) FROM starting_checkpoint WHERE seq <> ?').pluck().get(result!.to)).toBe(0);
    // The live log refuses any other delete still.
    expect(() => store.db.prepare('DELETE FROM events WHERE seq = (SELECT max(seq) FROM events)').run()).toThrow(/append-only/);
    await store.close();

    const replay = await runInProcess(['replay', '--db', path]);
    expect(replay.status, replay.stderr).toBe(0);
    const audit = await runInProcess(['audit', someRun, '--db', path]);
    expect(audit.status, audit.stderr).toBe(0);
    expect(audit.stdout).toContain(someRun);
  }, 40_000);

  for (const step of ['checkpoint', 'write', 'rename', 'record', 'remove'] as const satisfies readonly ArchiveStep[]) {
    it(`a SIGKILL before step "${step}" loses nothing, and the next start finishes or undoes it`, async () => {
      const { path, now, rows } = await oldLog();
      const child = spawn(process.execPath, [builtScript('test/fixtures/archiveKilled.ts'), path, String(now), step], { stdio: 'pipe' });
      const { signal } = await new Promise<{ signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (_code, signal) => resolve({ signal })));
      expect(signal).toBe('SIGKILL');
      expect(withoutRecords(history(path))).toEqual(rows);

      const store = await openSqliteStore(path);
      await recoverArchives(store, path, now);
      expect(withoutRecords(history(path))).toEqual(rows);
      // What a crash left half done is either done or undone: never a segment unrecorded, never rows in both.
      const folder = join(dirname(path), 'archive');
      const segments = existsSync(folder) ? readdirSync(folder) : [];
      expect(segments.filter((f) => f.endsWith('.tmp'))).toEqual([]);
      const recorded = store.db.prepare("SELECT count(*) FROM events WHERE type = 'log.archived'").pluck().get();
      expect(segments.length).toBe(recorded);
      // The next round archives what is left (or nothing when the killed one got that far).
      await archiveOnce(store, path, { retainDays: 2, now, checkpoint });
      expect(readdirSync(folder).filter((f) => f.endsWith('.db'))).toHaveLength(1);
      expect(liveCount(path)).toBeLessThan(rows.length - 10);
      expect(withoutRecords(history(path))).toEqual(rows);
      await store.close();
      const replay = await runInProcess(['replay', '--db', path]);
      expect(replay.status, replay.stderr).toBe(0);
    }, 40_000);
  }
});
