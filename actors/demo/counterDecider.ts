import type { DomainEvent, EventData, NewDomainEvent } from '../../events/catalog.ts';
import type { Decider } from '../runtime/decider.ts';

/** The demo counter: bumps up to a limit, a milestone every ten. Stands in until the run actors land. */
export interface CounterState {
  total: number;
}

export const counterDecider: Decider<CounterState> = {
  name: 'counter',
  // Asked of every event by a replay: a look at the stream's kind, without parsing the name apart.
  scopeOf: (event) => (event.stream.startsWith('counter:', event.stream.indexOf('/') + 1) ? event.stream : null),
  isInput: (event) => event.type === 'counter.bump.requested',
  initialState: () => ({ total: 0 }),
  decide(state, input): NewDomainEvent[] {
    if (input.type !== 'counter.bump.requested') return [];
    const { by, limit } = input.data as EventData<'counter.bump.requested'>;
    const { stream, at } = input;
    const total = state.total + by;
    if (total > limit) {
      return [{ stream, at, type: 'counter.bump.refused', data: { total: state.total, reason: `would pass the limit of ${limit}` } }];
    }
    const bumped: NewDomainEvent = { stream, at, type: 'counter.bumped', data: { total } };
    const crossed = Math.floor(total / 10) > Math.floor(state.total / 10);
    return crossed ? [bumped, { stream, at, type: 'counter.milestone.reached', data: { total } }] : [bumped];
  },
  evolve(state, event: DomainEvent) {
    if (event.type === 'counter.bumped') state.total = event.data.total;
    return state;
  },
};
