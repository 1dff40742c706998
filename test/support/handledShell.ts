import { type HandledLookup, handledOf, readsHandled } from '../../actors/lane/handledRun.ts';
import type { QueueState } from '../../actors/lane/queueState.ts';
import type { NewDomainEvent } from '../../events/catalog.ts';
import { parseStream } from '../../events/envelope.ts';

/**
 * What ComputerQueue.input does before a frame is decided, for tests that drive the queue decider in
 * memory: the frame records whether its run is live in the queue, else how the decisions so far say it
 * was handled here (see HandledLookup).
 */
export function withHandled<E extends NewDomainEvent>(state: QueueState, event: E, decided: readonly NewDomainEvent[]): E {
  if (event.type !== 'frame.received' || event.data.handled !== undefined || !readsHandled(event.data)) return event;
  const { runId } = event.data;
  const computer = parseStream(event.stream).owner ?? '';
  const handled: HandledLookup = state.runs[runId] ? 'live' : handledOf(decided, computer, runId);
  return { ...event, data: { ...event.data, handled } };
}
