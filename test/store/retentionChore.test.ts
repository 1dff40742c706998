/**
 * Retention as a running daemon's chore (docs/retention.md#the-cut): the daemon goes on serving while
 * its hourly round moves what ended more than `--retain-days` ago to an archive, every command a person
 * uses (`show`, `runs`, `lane`, `status`) still answers for the runs the live log keeps and for the
 * archived ones, and with `--delete-archives-after-days` the archive goes once it is that old, recorded,
 * after which a run that was in it is answered with where it went.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startDaemon } from '../../apps/daemon/startDaemon.ts';
import { waitFor } from '../e2e/support/cluster.ts';
import { runInProcess } from '../support/inProcessCli.ts';
import { JumpingClock } from '../support/jumpingClock.ts';
import { tempDir } from '../support/tempStore.ts';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

function lastSeqOf(db: string, runs: readonly string[]): number {
  const sqlite = new Database(db, { readonly: true });
  try {
    const last = sqlite.prepare<[string], number>("SELECT max(seq) FROM events WHERE json_extract(data, '$.runId') = ?").pluck();
    return Math.max(...runs.map((run) => last.get(run) ?? 0));
  } finally {
    sqlite.close();
  }
}

function lowestCheckpoint(db: string): number {
  const sqlite = new Database(db, { readonly: true });
  try {
    return sqlite.prepare<[], number>('SELECT min(seq) FROM projection_checkpoints').pluck().get() ?? 0;
  } finally {
    sqlite.close();
  }
}

describe('retention while the daemon runs', () => {
  it('trims the live log while runs go on; every command answers for kept and archived runs; an archive past --delete-archives-after-days goes', async () => {
    const dir = tempDir();
    const db = join(dir, 'runledger.db');
    const lines: string[] = [];
    // An hour past a UTC midnight: the horizon is a midnight, a day's cut happens within its hour.
    const clock = new JumpingClock(Date.UTC(2026, 5, 1, 1));
    const daemon = await startDaemon(
      {
        db,
        port: 0,
        exec: 'echo done',
        slots: 4,
        budgetNote: false,
        retainDays: 1,
        deleteArchivesAfterDays: 3,
        log: (line) => lines.push(line),
      },
      { clock },
    );
    onTestFinished(() => daemon.close());
    const url = daemon.url!;
    const token = readFileSync(join(dir, 'token'), 'utf8').trim();
    const submit = async (lane: string): Promise<string> => {
      const response = await fetch(`${url}/v1/runs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ lane, prompt: 'hi' }),
      });
      return ((await response.json()) as { run_id: string }).run_id;
    };
    const state = async (run: string) => ((await (await fetch(`${url}/v1/runs/${run}`)).json()) as { state?: string }).state;
    const done = (runs: string[]) =>
      waitFor('the runs to succeed', async () => (await Promise.all(runs.map(state))).every((s) => s === 'succeeded')).catch(async (e) => {
        throw new Error(`${(e as Error).message}: ${await Promise.all(runs.map(state))}\n${lines.join('\n')}`);
      });
    const board = ['--server', url];

    const old = [await submit('old'), await submit('old')];
    await done(old);
    // Two days on: the checkpoints (a minute's) are taken, and the hourly round finds the first day's
    // runs older than --retain-days 1; the cut waits for every checkpoint to be past it, so the round
    // of the next hour takes them once the checkpoints are.
    const oldEnd = lastSeqOf(db, old);
    clock.jump(2 * DAY_MS);
    const kept = [await submit('kept'), await submit('kept')];
    // A minute at a time: a checkpoint or mark whose reader had not caught up at one is saved at the next.
    await waitFor('the checkpoints past the old runs', () => {
      if (lowestCheckpoint(db) >= oldEnd) return true;
      clock.jump(60_000);
      return false;
    });
    clock.jump(HOUR_MS);
    await waitFor('a segment written with the old runs', () => lines.find((l) => Number(/^retention: events \d+\.\.(\d+) /.exec(l)?.[1]) >= oldEnd));
    await done(kept);

    // Kept and archived runs alike, through the commands a person uses (in this process: their exit
    // status as a shell sees it is not what this proves).
    const [showKept, showOld, runs, lane, status] = await Promise.all([
      runInProcess(['show', kept[0]!, ...board, '--json']),
      runInProcess(['show', old[0]!, ...board, '--json']),
      runInProcess(['runs', ...board, '--json']),
      runInProcess(['lane', 'old', ...board, '--json']),
      runInProcess(['status', ...board]),
    ]);
    for (const [show, run] of [
      [showKept, kept[0]],
      [showOld, old[0]],
    ] as const) {
      expect(show.status, show.stderr).toBe(0);
      expect(JSON.parse(show.stdout)).toMatchObject({ run_id: run, state: 'succeeded' });
    }
    expect(runs.status, runs.stderr).toBe(0);
    expect((JSON.parse(runs.stdout) as { run_id: string }[]).map((r) => r.run_id)).toEqual(expect.arrayContaining([...kept, ...old]));
    expect(lane.status, lane.stderr).toBe(0);
    expect(status.status, status.stderr).toBe(0);
    const audit = await runInProcess(['audit', old[0]!, '--db', db]);
    expect(audit.status, audit.stderr).toBe(0);
    // The segment holding the old run (the first round may have cut less, before the checkpoints moved).
    const file = /archived in archive\/(\S+) \(events \d+\.\.\d+, on /.exec(audit.stdout)?.[1];
    expect(file, audit.stdout).toBeDefined();
    expect(existsSync(join(dir, 'archive', file!))).toBe(true);

    // Three more days: the segment is older than --delete-archives-after-days 3, and goes, recorded.
    clock.jump(3 * DAY_MS);
    await waitFor('the segment deleted', () => !existsSync(join(dir, 'archive', file!)), 15_000);
    expect(readdirSync(join(dir, 'archive'))).not.toContain(file);
    const gone = await runInProcess(['audit', old[0]!, '--db', db]);
    expect(gone.stdout + gone.stderr).toContain(`archive/${file}`);
    expect(gone.stdout + gone.stderr).toMatch(/deleted/);
    const show = await runInProcess(['show', kept[0]!, ...board, '--json']);
    expect(show.status, show.stderr).toBe(0);
  }, 60_000);
});
