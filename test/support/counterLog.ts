import { decideAndAppend } from '../../actors/runtime/decideAndAppend.ts';
import { type CounterState, counterDecider } from '../../actors/demo/counterDecider.ts';
import { FakeClock } from '../../actors/runtime/clock.ts';
import type { EventStore } from '../../events/store/eventStore.ts';

/** One actor's view while it writes: its states and the stream versions it last saw. */
export class CounterActor {
  private readonly states = new Map<string, CounterState>();
  private readonly versions = new Map<string, number>();

  constructor(
    private readonly store: EventStore,
    readonly clock = new FakeClock(),
  ) {}

  /** Records a bump request and the decisions it leads to, a second later on the clock than the last. */
  async bump(counter: string, by: number, limit: number) {
    const stream = `counter:${counter}`;
    const state = this.states.get(stream) ?? counterDecider.initialState(stream);
    const input = { stream, type: 'counter.bump.requested', data: { by, limit }, at: this.clock.now() } as const;
    const outcome = await decideAndAppend(this.store, counterDecider, state, input, this.versions);
    if (!outcome.ok) throw outcome.conflict;
    if (!outcome.input) throw new Error('the counter ignored a bump request');
    this.states.set(stream, outcome.state);
    this.clock.advance(1_000);
    return { ...outcome, input: outcome.input };
  }
}

/**
 * A small history with every kind of decision: bumps, milestones and refusals, on two counters,
 * interleaved. Counter a ends at 20 (its last bump refused), b at 21.
 */
export async function writeCounterHistory(store: EventStore): Promise<void> {
  const actor = new CounterActor(store);
  for (let i = 0; i < 6; i++) {
    await actor.bump('a', 4, 20);
    if (i % 2 === 0) await actor.bump('b', 7, 100);
  }
}
