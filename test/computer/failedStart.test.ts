import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import { computerLockPath } from '../../apps/computer/processLock.ts';
import { startDaemon } from '../../apps/daemon/startDaemon.ts';
import { tempDbPath } from '../support/tempStore.ts';

describe('runledger daemon, when its start fails after the board is up', () => {
  it('given its computer locked by another live process, then the start fails naming the lock, and nothing it started reads the closed log', async () => {
    const db = tempDbPath();
    mkdirSync(dirname(db), { recursive: true });
    // Another live process (this test's parent) holds the computer's lock: the board starts, the computer cannot.
    writeFileSync(computerLockPath(db, 'local'), `${process.ppid}\n`);
    const errors: unknown[] = [];
    const record = (error: unknown) => errors.push(error);
    process.on('uncaughtException', record);
    try {
      await expect(startDaemon({ db, port: 0, exec: 'true' })).rejects.toThrow(/computer local on .* is already running/);
      // Past a poll of the log (every 250 ms): a follower left behind would read the closed log then.
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect(errors).toEqual([]);
    } finally {
      process.off('uncaughtException', record);
    }
  });
});
