import type { DomainEvent, NewEventOf } from '../../events/catalog.ts';
import { decider } from '../runtime/decider.ts';

/** The demo counter: bumps up to a limit, a milestone every ten. Stands in until the run actors land. */
export interface CounterState {
  total: number;
}

type Decision = NewEventOf<'counter.bumped' | 'counter.bump.refused' | 'counter.milestone.reached'>;

export const counterDecider = decider<CounterState, NewEventOf<'counter.bump.requested'>, Decision>({
  name: 'counter',
  inputs: ['counter.bump.requested'],
  // Asked of every event by a replay: a look at the stream's kind, without parsing the name apart.
  scopeOf: (event) => (event.stream.startsWith('counter:', event.stream.indexOf('/') + 1) ? event.stream : null),
  initialState: () => ({ total: 0 }),
  decide(state, input) {
    if (input.type !== 'counter.bump.requested') return [];
    const { by, limit } = input.data;
    const { stream, at } = input;
    const total = state.total + by;
    if (total > limit) {
      return [{ stream, at, type: 'counter.bump.refused', data: { total: state.total, reason: `would pass the limit of ${limit}` } }];
    }
    const bumped: Decision = { stream, at, type: 'counter.bumped', data: { total } };
    const crossed = Math.floor(total / 10) > Math.floor(state.total / 10);
    return crossed ? [bumped, { stream, at, type: 'counter.milestone.reached', data: { total } }] : [bumped];
  },
  evolve(state, event: DomainEvent) {
    if (event.type === 'counter.bumped') state.total = event.data.total;
    return state;
  },
});
