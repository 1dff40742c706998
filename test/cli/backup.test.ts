/**
 * Issue 26: `runledger backup FILE` writes a consistent copy of a live SQLite log while the daemon
 * runs turns, which every tool reads (replay verifies it, audit explains it); it refuses a log on
 * PostgreSQL (pointing to pg_dump) and an existing FILE unless --force.
 */
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../e2e/support/cluster.ts';
import { DaemonProcess } from '../support/daemonProcess.ts';
import { runInProcess } from '../support/inProcessCli.ts';
import { tempDir } from '../support/tempStore.ts';

describe('runledger backup', () => {
  it('given a daemon running turns, then copies taken meanwhile are logs that replay verifies and audit explains, owner-only, each up to its own moment', async () => {
    const dir = tempDir();
    const db = join(dir, 'log', 'runledger.db');
    const daemon = await DaemonProcess.start(db, ['--exec', 'cat', '--slots', '2', '--budget-note', 'off']);
    const first = await Promise.all(['a', 'b', 'c'].map((lane) => daemon.submit(lane, `hello ${lane}`)));
    // Copies taken while more runs are submitted and run.
    const more = Promise.all(
      Array.from({ length: 8 }, async (_, i) => {
        const runId = await daemon.submit(`lane${i % 4}`, `prompt ${i}`);
        return daemon.terminal(runId);
      }),
    );
    const copies = [join(dir, 'copy-1.db'), join(dir, 'copy-2.db')];
    const taken = await Promise.all(copies.map((copy) => runInProcess(['backup', copy, '--db', db, '--json'])));
    for (const result of taken) expect(result.status, result.stderr).toBe(0);
    for (const run of await more) expect(run.state).toBe('succeeded');
    for (const runId of first) expect((await daemon.terminal(runId)).state).toBe('succeeded');
    // The suite's one backup through the real entry point; the file's others in this process (the same dispatch).
    const last = await runCli(['backup', join(dir, 'copy-3.db'), '--db', db]);
    expect(last.status, last.stderr).toBe(0);
    expect(last.stdout).toMatch(new RegExp(`^backed up ${db} to ${join(dir, 'copy-3.db')}: events up to seq \\d+, [\\d.]+ MB\\. The token files`));

    for (const [i, copy] of [...copies, join(dir, 'copy-3.db')].entries()) {
      expect(statSync(copy).mode & 0o777).toBe(0o600);
      if (i < copies.length) expect(JSON.parse(taken[i]!.stdout)).toMatchObject({ log: db, file: copy, head_seq: expect.any(Number) });
      // In this process (the same dispatch): replay and audit through the real binary are other files' (test/cli/errors.test.ts, test/audit/).
      const replayed = await runInProcess(['replay', '--db', copy]);
      expect(replayed.status, replayed.stdout + replayed.stderr).toBe(0);
      const audited = await runInProcess(['audit', '--db', copy]);
      expect(audited.status, audited.stderr).toBe(0);
    }
    // The last copy, taken after every run ended, has them all.
    expect((await runInProcess(['replay', '--db', join(dir, 'copy-3.db')])).status).toBe(0);
    const audit = await runInProcess(['audit', first[0]!, '--db', join(dir, 'copy-3.db')]);
    expect(audit.status, audit.stderr).toBe(0);
    expect(audit.stdout).toContain('succeeded');
    daemon.signal('SIGTERM');
    expect((await daemon.exit()).code).toBe(0);
  }, 45_000);

  it('given an existing FILE, then it refuses unless --force, exit 2; with --force, it replaces it', async () => {
    const dir = tempDir();
    const db = join(dir, 'runledger.db');
    expect((await runInProcess(['computer', 'add', 'c1', '--db', db])).status).toBe(0);
    const file = join(dir, 'copy.db');
    writeFileSync(file, 'something of value\n');
    const refused = await runInProcess(['backup', file, '--db', db]);
    expect(refused).toMatchObject({ status: 2, stdout: '' });
    expect(refused.stderr).toBe(`runledger: ${file} exists already: give another file, or --force to replace it\n`);
    expect((await runInProcess(['backup', file, '--db', db, '--force'])).status).toBe(0);
    expect((await runInProcess(['computer', 'list', '--db', file])).stdout).toContain('c1');
  });

  it('given a log on PostgreSQL, then it refuses pointing to pg_dump, exit 2; given no log, it names the path', async () => {
    const onPostgres = await runInProcess(['backup', join(tempDir(), 'x.db'), '--db', 'postgres://runledger:secret@127.0.0.1:9/runledger']);
    expect(onPostgres.status).toBe(2);
    expect(onPostgres.stderr).toContain('runledger: the log is on PostgreSQL (postgres://runledger:');
    expect(onPostgres.stderr).toContain("back it up with PostgreSQL's own tools, e.g. `pg_dump --format=custom --file");
    expect(onPostgres.stderr).not.toContain('secret');
    const dir = tempDir();
    const none = await runInProcess(['backup', join(dir, 'x.db'), '--db', join(dir, 'nothing.db')]);
    expect(none.status).toBe(2);
    expect(none.stderr).toContain(`there is no log at ${join(dir, 'nothing.db')} (given with --db)`);
  });
});
