/**
 * Issue 15: a reason is said once. The board records "claimed by c1" and "completed: failed (X)" as
 * its reasons; the narration and the audit said them again around them ("claimed by c1: claimed by
 * c1", "finished, failed: completed: failed (X) (X)"). The rendering says each once, for the logs
 * already written as for new ones: the recorded reasons are left as they are (they replay).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { DomainEvent } from '../../events/catalog.ts';
import { describeEvent } from '../../projections/audit/describeEvent.ts';
import { DaemonProcess } from '../support/daemonProcess.ts';
import { runInProcess } from '../support/inProcessCli.ts';
import { tempDir } from '../support/tempStore.ts';

function stored(type: string, data: unknown): DomainEvent {
  return { seq: 1, stream: 'run:r1', version: 1, type, data, at: 0, cause: null, actor: 'test:1' } as DomainEvent;
}

describe('each reason said once', () => {
  it.each([
    ['board.run.claimed', { runId: 'r1', computerId: 'demo-2', reason: 'claimed by demo-2' }, 'claimed by demo-2'],
    ['board.run.claimed', { runId: 'r1', computerId: 'c1', reason: 'granted again' }, 'claimed by c1: granted again'],
    [
      'board.run.finished',
      { runId: 'r1', computerId: 'c1', state: 'failed', error: 'boom', reason: 'completed: failed (boom)' },
      'completed: failed (boom)',
    ],
    [
      'board.run.finished',
      { runId: 'r1', computerId: 'c1', state: 'failed', error: 'boom\nat line 2', reason: 'completed: failed (boom)' },
      'completed: failed (boom)',
    ],
    ['board.run.finished', { runId: 'r1', computerId: 'c1', state: 'succeeded', reason: 'completed: succeeded' }, 'completed: succeeded'],
    [
      'board.run.finished',
      { runId: 'r1', computerId: 'c1', state: 'cancelled', error: 'cancelled_by_user', reason: 'completed: cancelled by its user' },
      'completed: cancelled by its user',
    ],
    ['board.run.finished', { runId: 'r1', state: 'resolved', error: 'lease lapsed', reason: 'reaped' }, 'finished, resolved: reaped (lease lapsed)'],
  ])('%s %j → %s', (type, data, sentence) => {
    expect(describeEvent(stored(type, data))).toBe(sentence);
  });

  it('a failed run through the daemon: its narration and its audit say the claim and the failure once', async () => {
    const db = join(tempDir(), 'runledger.db');
    const daemon = await DaemonProcess.start(db, ['--exec', `sh -c 'echo boom >&2; exit 3'`]);
    const runId = await daemon.submit('alice', 'hi');
    expect((await daemon.terminal(runId)).state).toBe('failed');
    const audit = await runInProcess(['audit', runId, '--db', db]);
    expect(audit.status).toBe(0);
    expect(audit.stdout).toMatch(/board\.run\.claimed\s+claimed by local\n/);
    expect(audit.stdout).toMatch(/board\.run\.finished\s+completed: failed \([^)]*\)\n/);
    expect(audit.stdout).not.toMatch(/claimed by local: claimed by local/);
    await daemon.waitForOutput(/completed: failed/);
    expect(daemon.output).not.toMatch(/finished, failed: completed: failed/);
  });
});
