/**
 * docs/rules.md#tools: every command that takes a run id takes a unique prefix of it (6 characters or more); an
 * ambiguous one is refused listing the candidates. The board's commands ask the board, the log's read it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Daemon, startDaemon } from '../../apps/daemon/startDaemon.ts';
import { runCli } from '../e2e/support/cluster.ts';
import { runInProcess } from '../support/inProcessCli.ts';
import { seedSubmittedRuns } from '../support/seededRuns.ts';

const TWIN_1 = 'a1b2c3d4-0000-4000-8000-000000000001';
const TWIN_2 = 'a1b2c3d4-0000-4000-8000-000000000002';
const LONE = 'f00dfeed-0000-4000-8000-000000000003';

describe('run ids by unique prefix', () => {
  let dir: string;
  let db: string;
  let board: Daemon;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'runledger-prefix-'));
    db = join(dir, 'runledger.db');
    await seedSubmittedRuns(db, [TWIN_1, TWIN_2, LONE]);
    board = await startDaemon({ db, port: 0, exec: 'true', boardOnly: true });
  });
  afterAll(async () => {
    await board?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('show and audit: a unique prefix names its run; an ambiguous, a too short or an unmatched one is refused, exit 2', async () => {
    const server = ['--server', board.url!, '--db', db];
    // One refusal of each through the real entry point (its exit status as a shell sees it); the rest in this process.
    const [showTwins, auditNone] = await Promise.all([runCli(['show', 'a1b2c3d4', ...server]), runCli(['audit', 'beefbeef', '--db', db])]);
    const showOne = await runInProcess(['show', 'f00dfe', ...server, '--json']);
    const showShort = await runInProcess(['show', 'f00d', ...server]);
    const showNone = await runInProcess(['show', 'beefbeef', ...server]);
    const auditOne = await runInProcess(['audit', 'f00dfeed', '--db', db, '--json']);
    const auditTwins = await runInProcess(['audit', 'a1b2c3', '--db', db]);
    const auditShort = await runInProcess(['audit', 'a1b2', '--db', db]);
    expect(showOne.stderr).toBe('');
    expect(JSON.parse(showOne.stdout)).toMatchObject({ run_id: LONE, lane: 'lane-2', state: 'queued' });
    expect(showOne.status).toBe(0);
    expect(showTwins).toMatchObject({ status: 2, stdout: '' });
    expect(showTwins.stderr).toBe(`runledger: a1b2c3d4 is ambiguous: it starts 2 runs: ${TWIN_1}, ${TWIN_2}\n`);
    expect(showShort.status).toBe(2);
    expect(showShort.stderr).toContain('runledger: a run id prefix needs at least 6 characters');
    expect(showNone.status).toBe(2);
    expect(showNone.stderr).toBe('runledger: no run starts with beefbeef\n');

    expect(auditOne.status).toBe(0);
    expect(JSON.parse(auditOne.stdout)).toMatchObject({ kind: 'run', id: LONE });
    expect(auditTwins.status).toBe(2);
    expect(auditTwins.stderr).toBe(`runledger: a1b2c3 is ambiguous: it starts 2 runs: ${TWIN_1}, ${TWIN_2}\n`);
    expect(auditShort.status).toBe(2);
    expect(auditShort.stderr).toContain('runledger: a run id prefix needs at least 6 characters');
    // An unknown id stays what it was for audit: a finding, exit 1, naming what it looked for.
    expect(auditNone.status).toBe(1);
    expect(auditNone.stderr).toContain('no run starts with beefbeef');
  });

  it('cancel takes a unique prefix, and refuses an ambiguous one before asking the board anything', async () => {
    const server = ['--server', board.url!, '--db', db];
    // In this process (test/e2e/cancelPushed.test.ts runs cancel through the real entry point).
    const twins = await runInProcess(['cancel', 'a1b2c3d4', ...server]);
    const lone = await runInProcess(['cancel', 'f00dfeed', ...server]);
    expect(twins.status).toBe(2);
    expect(twins.stderr).toContain('a1b2c3d4 is ambiguous: it starts 2 runs');
    expect(lone.stderr).toBe('');
    expect(lone.status).toBe(0);
    expect(lone.stdout).toContain(LONE);
  });

  it('replay --run (in this process) resolves a prefix from the log, and names what no run starts with', async () => {
    const replayed = await runInProcess(['replay', '--db', db, '--run', 'a1b2c3d4-0000-4000-8000-00000000000', '--json']);
    expect(replayed.status).toBe(2);
    expect(replayed.stderr).toContain('is ambiguous: it starts 2 runs');
    const one = await runInProcess(['replay', '--db', db, '--run', 'a1b2c3d4-0000-4000-8000-000000000002', '--json']);
    expect(one.stderr).toBe('');
    expect(one.status).toBe(0);
    const unique = await runInProcess(['replay', '--db', db, '--run', 'f00dfe', '--json']);
    expect(unique.status).toBe(0);
    expect(JSON.parse(unique.stdout)).toMatchObject({ ok: true });
    expect(unique.stdout).toContain(LONE);
    const none = await runInProcess(['replay', '--db', db, '--run', 'beefbeef']);
    expect(none.status).toBe(1);
    expect(none.stderr).toContain('no run starts with beefbeef');
  });
});
