import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runledger } from '../support/processes.ts';

/**
 * The options whose check needs a schema are checked by their command's action (the schemas load with
 * it, not at every start): each is refused exactly as commander refuses what a parser rejects, before
 * anything is opened or run.
 */
describe('an option refused by its command', () => {
  const folder = mkdtempSync(join(tmpdir(), 'runledger-options-'));
  const db = join(folder, 'never.db');
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it.each([
    [
      ['run', '--lane', 'bad!', '--prompt', 'x', '--dry-run'],
      `error: option '--lane <lane>' argument 'bad!' is invalid. --lane must match ^[A-Za-z0-9-]{1,64}$, not "bad!"`,
    ],
    [
      ['subscribe', 's1', '--kind', 'run.ended', '--kind', 'nope', '--db', db],
      `error: option '--kind <kind>' argument 'nope' is invalid. --kind wants one of run.queued, run.claimed, run.started, run.ended, session.closed, lane.adopted, computer.online, computer.offline, not "nope"`,
    ],
    [
      ['daemon', '--hook', 'on_run_done=true', '--db', db],
      `error: option '--hook <name=command>' argument 'on_run_done=true' is invalid. --hook wants NAME=COMMAND with NAME one of on_run_claimed, on_run_started, on_run_ended, on_session_closed, on_tick, not "on_run_done"`,
    ],
    [
      ['server', '--hook', 'on_tick=', '--db', db],
      `error: option '--hook <name=command>' argument 'on_tick=' is invalid. --hook on_tick= names no command`,
    ],
    [
      ['daemon', '--login', 'x', '--db', db],
      `error: option '--login <name=n>' argument 'x' is invalid. --login wants NAME=N (NAME of ^[A-Za-z0-9-]{1,64}$, N a whole number), not "x"`,
    ],
    [
      ['daemon', '--timeout-s', '99999999', '--db', db],
      `error: option '--timeout-s <s>' argument '99999999' is invalid. --timeout-s wants at most 2592000, not "99999999"`,
    ],
  ])('runledger %j: exit 2 (a usage error), naming the option and the rule', (args, message) => {
    const result = runledger(args);
    expect(result).toMatchObject({ status: 2, stdout: '', stderr: `${message}\n` });
    expect(existsSync(db)).toBe(false);
  });
});
