/**
 * An input whose append must hold a lease (a board's chore, docs/rules.md#postgresql-board) and is refused because the lease is
 * not held: no rival's append to read and decide after, so deciding again changes nothing. It is thrown
 * at once, never waited out as a conflict: the holder's own round (orphaned computers recorded
 * disconnected inside the lease renewal) would otherwise wait for a lease only its next renewal can
 * take back, and the board would stop renewing its lease and its liveness row for good.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import type { NewDomainEvent } from '../../events/catalog.ts';
import { DecidingActor } from '../../runtime/actors/decidingActor.ts';
import { startActorSystem, stopSystem } from '../../runtime/actors/runtime.ts';
import { LeaseLostError } from '../../runtime/store/leaseLost.ts';
import { type CounterState, counterDecider } from '../fixtures/counter/counterDecider.ts';
import { asInput } from '../fixtures/counter/counterEvents.ts';
import { T0 } from '../support/events.ts';
import { postgresKind } from '../support/storeKinds.ts';

const STREAM = 'counter:a';
const bump = (i: number): NewDomainEvent => asInput({ stream: STREAM, type: 'counter.bump.requested', data: { by: 1, limit: 100 }, at: T0 + i });

describe('an input refused because its lease is not held', () => {
  it('given a chore whose lease another board holds, when its input is recorded (waited out, not fail-fast), then it is refused at once as lease lost and writes nothing', async () => {
    const store = await postgresKind.open(await postgresKind.fresh(), { pollMs: 600_000 });
    onTestFinished(() => store.close());
    const system = startActorSystem({ onError: () => undefined });
    onTestFinished(() => stopSystem(system));
    const actor = new DecidingActor<CounterState>(system, store, {
      name: 'counter-a',
      decider: counterDecider,
      hydrate: async () => counterDecider.initialState(STREAM),
      // No board ever took this lease: its row is missing, the append's transaction refuses it.
      leaseFor: () => ({ name: 'chores', holder: 'elsewhere#x:1', epoch: 1 }),
    });

    const bound = new Promise<'still waiting'>((resolve) => setTimeout(() => resolve('still waiting'), 10_000).unref());
    const outcome = await Promise.race([
      actor.input(bump(1)).then(
        () => 'recorded',
        (error: unknown) => error,
      ),
      bound,
    ]);

    expect(outcome).toBeInstanceOf(LeaseLostError);
    expect((outcome as Error).message).toContain('was never taken');
    expect(await store.readStream(STREAM)).toEqual([]);
  });
});
