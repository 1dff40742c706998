import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startDaemon } from '../../apps/daemon/startDaemon.ts';
import { startCli } from '../e2e/support/cluster.ts';
import { tempDir } from '../support/tempStore.ts';

/**
 * A computer joining a board nobody runs: it starts, and keeps trying to connect, which is all these
 * tests need. It sends the board no report (as the demo's second computer): a stop would give the
 * absent board 5 s to take it.
 */
const BOARD = 'http://127.0.0.1:9';
const joining = (db: string) => startDaemon({ db, exec: 'true', server: BOARD, computer: 'c1', token: 't', reportToBoard: false });

describe('the computer lock is per log file, not per folder (docs/rules.md#computer-behaviour, "Restart")', () => {
  it('given a daemon running as c1 on one log, then c1 starts on another log of the same folder, and not on the same log', async () => {
    const dir = tempDir();
    const other = startCli(['daemon', '--server', BOARD, '--computer', 'c1', '--token', 't', '--db', join(dir, 'a.db'), '--exec', 'true']);
    await other.waitForOutput(/computer c1 started/);

    const beside = await joining(join(dir, 'b.db'));
    await beside.close();
    await expect(joining(join(dir, 'a.db'))).rejects.toThrow(
      /computer c1 on .*a\.db is already running \(pid \d+, lock .*a\.db\.computer-c1\.lock\)/,
    );
  });
});
