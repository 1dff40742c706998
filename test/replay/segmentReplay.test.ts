/**
 * Replay and audit of a log cut by retention (docs/retention.md#replay-and-audit-of-an-archive): each
 * segment and the live log carry the states of every actor and projection at their first event, so
 * `runledger replay` verifies one segment alone, the live log alone, and a log whose oldest archives
 * the user deleted, re-deriving every decision from that starting checkpoint and saying which it was.
 */
import { copyFileSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startDaemon } from '../../apps/daemon/startDaemon.ts';
import { runCli, waitFor } from '../e2e/support/cluster.ts';
import { runInProcess } from '../support/inProcessCli.ts';
import { JumpingClock } from '../support/jumpingClock.ts';
import { tempDir } from '../support/tempStore.ts';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

function query<T>(db: string, sql: string): T {
  const sqlite = new Database(db, { readonly: true });
  try {
    return sqlite.prepare<[], T>(sql).pluck().get() as T;
  } finally {
    sqlite.close();
  }
}

const segments = (dir: string): string[] =>
  readdirSync(join(dir, 'archive'))
    .filter((f) => /^runledger-\d+-\d+\.db$/.test(f))
    .sort((a, b) => Number(a.split('-')[1]) - Number(b.split('-')[1]));

/** A daemon with --retain-days 1 on a clock it is told to move: three days of runs, two cuts. */
async function twoCuts(dir: string): Promise<{ db: string; runs: string[][] }> {
  const db = join(dir, 'runledger.db');
  const lines: string[] = [];
  const clock = new JumpingClock(Date.UTC(2026, 5, 1, 1));
  const daemon = await startDaemon(
    { db, port: 0, exec: 'echo done', slots: 2, budgetNote: false, retainDays: 1, log: (l) => lines.push(l) },
    { clock },
  );
  onTestFinished(() => daemon.close());
  const token = readFileSync(join(dir, 'token'), 'utf8').trim();
  const submit = async (lane: string): Promise<string> => {
    const response = await fetch(`${daemon.url}/v1/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ lane, prompt: 'hi' }),
    });
    return ((await response.json()) as { run_id: string }).run_id;
  };
  const state = async (run: string) => ((await (await fetch(`${daemon.url}/v1/runs/${run}`)).json()) as { state?: string }).state;
  let n = 0;
  const day = async (): Promise<string[]> => {
    n++;
    // The same lane every day: its queue's state goes on across the cuts.
    const runs = [await submit(`work${n}`), await submit(`work${n}`), await submit('other')];
    await waitFor('the runs to succeed', async () => (await Promise.all(runs.map(state))).every((s) => s === 'succeeded')).catch(async (e) => {
      const sqlite = new Database(db, { readonly: true });
      const rows = sqlite.prepare('SELECT seq, stream, version, type, substr(data,1,200) FROM events WHERE seq > 60 ORDER BY seq').raw().all();
      sqlite.close();
      throw new Error(
        `${(e as Error).message}: ${await Promise.all(runs.map(state))}\n${lines.join('\n')}\n${rows.map((r) => JSON.stringify(r)).join('\n')}`,
      );
    });
    return runs;
  };
  const cutPast = async (seq: number): Promise<void> => {
    // The checkpoints move a minute at a time; the cut waits for them, then the hourly round makes it.
    await waitFor('the checkpoints past the day', () => {
      if (query<number>(db, 'SELECT min(seq) FROM projection_checkpoints') >= seq) return true;
      clock.jump(60_000);
      return false;
    });
    clock.jump(HOUR_MS);
    await waitFor(`a segment through seq ${seq}`, () => lines.find((l) => Number(/^retention: events \d+\.\.(\d+) /.exec(l)?.[1]) >= seq));
  };
  const runs = [await day()];
  const firstEnd = query<number>(db, 'SELECT max(seq) FROM events');
  clock.jump(2 * DAY_MS);
  runs.push(await day());
  await cutPast(firstEnd);
  const secondEnd = query<number>(db, 'SELECT max(seq) FROM events');
  clock.jump(2 * DAY_MS);
  runs.push(await day());
  await cutPast(secondEnd);
  await daemon.close();
  return { db, runs };
}

describe('replay and audit of a log cut by retention, from the starting checkpoints', () => {
  it('replays one segment alone, the live log alone, and a log whose oldest archives were deleted', async () => {
    const dir = tempDir();
    const { db, runs } = await twoCuts(dir);
    const files = segments(dir);
    expect(files.length).toBeGreaterThanOrEqual(2);
    const later = files.at(-1)!;
    // Three copies of the history: every archive there, the oldest deleted by hand, every one deleted.
    const copy = (name: string, deleted: readonly string[]): string => {
      const to = join(dir, name);
      mkdirSync(join(to, 'archive'), { recursive: true });
      copyFileSync(db, join(to, 'runledger.db'));
      for (const file of files.filter((f) => !deleted.includes(f))) copyFileSync(join(dir, 'archive', file), join(to, 'archive', file));
      return join(to, 'runledger.db');
    };
    const gapDb = copy('gap', files.slice(0, 1));
    const liveDb = copy('live', files);
    // A checkpoint whose board state a runledger of another version wrote (its fold's version moved on).
    const otherShape = copy('shape', files);
    const sqlite = new Database(otherShape);
    sqlite.prepare("UPDATE starting_checkpoint SET version = version + 1 WHERE name = 'board'").run();
    sqlite.close();

    // The whole history through the real entry point; the other copies in this process, through the same dispatch.
    const whole = await runCli(['replay', '--db', db]);
    const alone = await runInProcess(['replay', '--db', join(dir, 'archive', later)]);
    const gap = await runInProcess(['replay', '--db', gapDb]);
    const live = await runInProcess(['replay', '--db', liveDb, '--json']);
    const audit = await runInProcess(['audit', runs[0]![0]!, '--db', liveDb]);
    const shape = await runInProcess(['replay', '--db', otherShape]);
    // Every archive there: one fold from seq 1.
    expect(whole.status, whole.stderr).toBe(0);
    expect(whole.stdout).not.toContain('starting checkpoint');
    // A later segment alone: it starts from its own checkpoint, and says so.
    expect(alone.status, alone.stdout + alone.stderr).toBe(0);
    expect(alone.stdout).toMatch(new RegExp(`from the starting checkpoint at seq \\d+ in ${later.replace('.', '\\.')}`));
    // The oldest archive deleted by hand: the replay starts at the first one left.
    expect(gap.status, gap.stdout + gap.stderr).toBe(0);
    expect(gap.stdout).toContain(`from the starting checkpoint at seq ${files[0]!.split('-')[2]!.replace('.db', '')} in archive/${files[1]}`);
    // Every archive deleted: the live log alone, from its own checkpoint.
    expect(live.status, live.stdout + live.stderr).toBe(0);
    expect(JSON.parse(live.stdout)).toMatchObject({
      ok: true,
      startedFrom: { seq: Number(later.split('-')[2]!.replace('.db', '')), where: 'runledger.db' },
    });
    // A run whose history was in an archive deleted by hand: said, naming the file that is missing.
    expect(audit.status).toBe(1);
    expect(audit.stderr).toContain(`archive/${files[0]}`);
    expect(audit.stderr).toMatch(/its file is missing/);
    // A state of another shape is refused, naming the fold and its versions, never replayed from.
    expect(shape).toMatchObject({ status: 1, stdout: '' });
    expect(shape.stderr).toMatch(
      /starting checkpoint of runledger\.db \(the states at seq \d+\) cannot start the replay of the board decider: it holds board version \d+, and this runledger folds version \d+/,
    );
  }, 60_000);
});
