import type { DomainEvent } from '../../events/catalog.ts';
import type { InputRecall } from '../decider.ts';
import type { QueueInput } from './decideQueue.ts';
import { endOf, readsHandled } from './handledRun.ts';
import type { HandledOutcome, QueueState } from './queueState.ts';

/**
 * Replay's upcast of a frame recorded before frames carried `handled` (issue 16): an older queue kept
 * a ledger of every run it handled and answered a resent frame of one from it. Its state no longer
 * keeps that ledger, so such a frame gets the `handled` the shell would have read from the run's
 * events: the queue's last end of the run on that computer before the frame. Memory: one small end a
 * run handled, for the replay only. A replay that starts from a snapshot has not seen the ends before it.
 */
export function handledRecall(): InputRecall<QueueState, QueueInput> {
  /** `<computer> <runId>` → its last end, and where. */
  const ends = new Map<string, { readonly outcome: HandledOutcome; readonly seq: number }>();
  const ownerOf = (stream: string) => stream.slice(0, Math.max(0, stream.indexOf('/')));
  return {
    note(event: DomainEvent) {
      const end = endOf(event);
      if (end !== null) ends.set(`${ownerOf(event.stream)} ${end.runId}`, { outcome: end.outcome, seq: event.seq });
    },
    fill(state, input, seq) {
      if (input.type !== 'frame.received' || input.data.handled !== undefined || !readsHandled(input.data)) return input;
      if (state.runs[input.data.runId]) return input;
      const end = ends.get(`${ownerOf(input.stream)} ${input.data.runId}`);
      if (end === undefined || end.seq >= seq) return input;
      return { ...input, data: { ...input.data, handled: end.outcome } };
    },
  };
}
