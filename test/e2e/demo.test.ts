/**
 * `npm start` (`runledger daemon --demo`) as a new user sees it: runs queue, one parks, all run and
 * complete. The park is a real one: the demo runs a second computer, both are pushed the new lanes,
 * and the one that loses the first turn of lane alice is told conversation_busy for the second.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/tempStore.ts';
import { checkLogs, freePort, startCli } from './support/cluster.ts';

describe('runledger daemon --demo', () => {
  it('given a fresh log, then its narration shows the demo runs queue on both computers, a second turn park, and every run settle; a second start reuses its computers', async () => {
    const db = join(tempDir(), 'demo.db');
    const args = ['daemon', '--demo', '--db', db, '--port', String(await freePort())];
    const daemon = startCli(args);

    await daemon.waitForOutput(/demo: a second computer, demo-2, joined the board/);
    await daemon.waitForOutput(/demo-2: queued in lane alice/);
    await daemon.waitForOutput(/: waits: an earlier turn of its conversation is still open \(until/);
    await daemon.waitForOutput(/(settled, reported to the board[\s\S]*){4}/, 30_000);
    expect(daemon.stdout).toMatch(/skipped: another computer has it/);
    const stopped = await daemon.stop('SIGTERM');
    expect(stopped, daemon.describe()).toEqual({ code: 0, signal: null });

    const again = startCli(args);
    await again.waitForOutput(/demo: a second computer, demo-2, joined the board/);
    expect(again.stdout).not.toMatch(/did not start/);
    expect(await again.stop('SIGTERM'), again.describe()).toEqual({ code: 0, signal: null });
    await checkLogs([db]);
  });
});
