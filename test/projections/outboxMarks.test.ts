/**
 * `runledger rebuild` checks the outboxes' marks too (docs/rules.md#projections, the cursors row): a cursor moves in its
 * mark (past events that call for nothing), so a mark the log contradicts would start an outbox past an
 * effect never done, or hold one pending that has ended. Such a mark fails the rebuild, named.
 */
import { describe, expect, it } from 'vitest';
import type { EffectConsumer } from '../../runtime/actors/effectConsumer.ts';
import { Outbox } from '../../runtime/actors/outbox.ts';
import { counterEventOf } from '../fixtures/counter/counterEvents.ts';
import { counterRegistry } from '../fixtures/counter/counterRegistry.ts';
import { openCounterStore } from '../fixtures/counter/counterStore.ts';
import { bumped, milestone } from '../support/events.ts';
import { runInProcess } from '../support/inProcessCli.ts';
import { stampedAt } from '../support/stampedAt.ts';
import { tempDbPath } from '../support/tempStore.ts';

const announcer: EffectConsumer<number> = {
  name: 'announce',
  delivery: 'at-most-once',
  effectOf: (event) => (counterEventOf(event)?.type === 'counter.milestone.reached' ? event.seq : null),
  perform: async () => ({ ok: true }),
};

async function logWithMark(): Promise<{ path: string; cursor: number }> {
  const path = tempDbPath();
  const store = await openCounterStore(path);
  const outbox = new Outbox(store, announcer, stampedAt(1));
  await outbox.open();
  await store.append({ expected: { 'counter:a': 'any' }, events: [milestone('counter:a', 1), bumped('counter:a', 2), bumped('counter:a', 3)] });
  await outbox.drain();
  outbox.stop();
  await outbox.settle();
  // The stop's save of the mark is not awaited by it: wait until it is stored.
  await expect.poll(async () => (await store.checkpoints.load('outbox:announce'))?.seq ?? 0).toBeGreaterThan(0);
  const cursor = (await store.checkpoints.load('outbox:announce'))!.seq;
  await store.close();
  return { path, cursor };
}

async function storeMark(path: string, seq: number, mark: object): Promise<void> {
  const store = await openCounterStore(path);
  await store.checkpoints.save({ name: 'outbox:announce', seq, state: JSON.stringify(mark) });
  await store.close();
}

describe('runledger rebuild and the outboxes marks', () => {
  it('given the mark an outbox saved, then it agrees with the log', async () => {
    const { path, cursor } = await logWithMark();
    const cli = await runInProcess(['rebuild', '--db', path], { registry: counterRegistry });
    expect(cli.stdout).toContain(`✓ outbox:announce: its mark at seq ${cursor} agrees with the log`);
    expect(cli.status).toBe(0);
  });

  it('given a mark holding pending an effect that ended, or a cursor past the log, then rebuild fails naming it', async () => {
    const { path } = await logWithMark();
    // The take was seq 4 (effect 1) and its record seq 5: a cursor past the record holds nothing pending.
    await storeMark(path, 5, { version: 2, cursor: 5, pending: { 1: 4 } });
    const ended = await runInProcess(['rebuild', '--db', path], { registry: counterRegistry });
    expect(ended.stdout).toContain(
      '✗ outbox:announce: its mark at seq 5 disagrees with the log: the effect of seq 1 it holds pending ended at seq 5 (outbox.performed)',
    );
    expect(ended.status).toBe(1);
    await storeMark(path, 105, { version: 2, cursor: 105, pending: {} });
    const ahead = await runInProcess(['rebuild', '--db', path, '--json'], { registry: counterRegistry });
    expect(ahead.status).toBe(1);
    expect(JSON.parse(ahead.stdout)).toMatchObject({
      ok: false,
      marks: [{ mark: 'outbox:announce', problem: "its cursor 105 is past the log's head, seq 5" }],
    });
  });
});
