import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { fixtureAgent } from '../support/computerRuns.ts';
import { DaemonProcess } from '../support/daemonProcess.ts';
import { runInProcess } from '../support/inProcessCli.ts';
import { tempDir } from '../support/tempStore.ts';

/** Writes a row behind the daemon's back, as a newer (or broken) runledger sharing the file could; its seq. */
function insertForeign(db: string, row: { stream: string; type: string; data: string }): number {
  const raw = new Database(db);
  try {
    raw.pragma('busy_timeout = 10000');
    const result = raw
      .prepare(
        `INSERT INTO events (stream, version, type, data, at, cause, actor)
         VALUES (@stream, (SELECT coalesce(max(version), 0) + 1 FROM events WHERE stream = @stream), @type, @data, @at, NULL, 'newer:1')`,
      )
      .run({ ...row, at: Date.now() });
    return Number(result.lastInsertRowid);
  } finally {
    raw.close();
  }
}

const count = (text: string, part: string) => text.split(part).length - 1;

describe('a daemon whose log gains rows it cannot read', () => {
  it('names each foreign row once with its seq and keeps serving, starts again, and only replay and rebuild fail on them', async () => {
    const dir = tempDir();
    const db = join(dir, 'runledger.db');
    const args = ['--exec', fixtureAgent('echo.sh')];
    const daemon = await DaemonProcess.start(db, args);
    expect((await daemon.terminal(await daemon.submit('A', 'before'))).state).toBe('succeeded');

    const unknown = insertForeign(db, { stream: 'local/run:teleported-1', type: 'run.teleported', data: '{"to":"mars"}' });
    // In the stream of the lane the next run goes to: the lane's actor writes on after it.
    const malformed = insertForeign(db, { stream: 'local/lane:A', type: 'run.parked', data: '{"oops":1}' });
    await daemon.waitForOutput(new RegExp(`seq ${malformed}\\b`));
    await daemon.waitForOutput(new RegExp(`seq ${unknown}\\b`));

    // Still serving: a run submitted afterwards runs, and the process is alive.
    expect((await daemon.terminal(await daemon.submit('A', 'after'))).state).toBe('succeeded');
    expect(daemon.output).toMatch(new RegExp(`seq ${unknown} of type "run\\.teleported".*unknown event type`));
    expect(daemon.output).toMatch(new RegExp(`seq ${malformed} of type "run\\.parked"`));
    expect(count(daemon.output, `seq ${unknown} `)).toBe(1);
    expect(count(daemon.output, `seq ${malformed} `)).toBe(1);
    expect(daemon.output).not.toContain('InvalidEventError');

    daemon.signal('SIGTERM');
    expect((await daemon.exit()).code).toBe(0);
    // Its next life starts and serves. It reads none of the log its checkpoints and outbox marks are
    // past (a start takes the same time on any log: issue 16), so rows named in the last life are not
    // read, nor named, again.
    const again = await DaemonProcess.start(db, args);
    expect((await again.terminal(await again.submit('A', 'next life'))).state).toBe('succeeded');
    again.signal('SIGTERM');
    expect((await again.exit()).code).toBe(0);

    const replay = await runInProcess(['replay', '--db', db]);
    expect(replay.status).toBe(1);
    expect(`${replay.stdout}${replay.stderr}`).toMatch(new RegExp(`seq ${unknown}\\b.*run\\.teleported`));
    const rebuild = await runInProcess(['rebuild', '--db', db]);
    expect(rebuild.status).toBe(1);
    expect(`${rebuild.stdout}${rebuild.stderr}`).toMatch(new RegExp(`seq ${unknown}\\b.*run\\.teleported`));
  }, 60_000);
});
