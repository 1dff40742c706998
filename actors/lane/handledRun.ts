import type { EventData, NewDomainEvent } from '../../events/catalog.ts';
import type { HandledOutcome, QueueState } from './queueState.ts';

/**
 * What the shell found of a frame's run before the queue decided it (issue 16), recorded on the frame
 * (`frame.received`'s `handled`): `live` when the queue held the run, else how this computer last
 * handled it, from the log (null: never). The queue's state holds only live runs, so a resent frame of
 * a run already handled is told apart by this, and the decision stays a function of (state, input).
 */
export type HandledLookup = 'live' | HandledOutcome | null;

/** The frames whose answer reads whether their run was handled here: only they are looked up. */
export function readsHandled(frame: EventData<'frame.received'>): boolean {
  return frame.kind === 'run.requested' || frame.kind === 'run.cancelled';
}

/**
 * How `computer` last handled the run, from the run's events (`readEntity('run:<id>')`, indexed): its
 * queue's last end of it (a skip for a passing reason, `retry`, is no end), or null when it has none.
 */
export function handledOf(events: readonly NewDomainEvent[], computer: string, runId: string): HandledOutcome | null {
  const prefix = `${computer}/`;
  let outcome: HandledOutcome | null = null;
  for (const event of events) {
    if (!event.stream.startsWith(prefix)) continue;
    const end = endOf(event);
    if (end !== null && end.runId === runId) outcome = end.outcome;
  }
  return outcome;
}

/** The queue's end of a run that `event` is, if it is one (a skip for a passing reason, `retry`, is none). */
export function endOf(event: NewDomainEvent): { readonly runId: string; readonly outcome: HandledOutcome } | null {
  if (event.type === 'run.skipped') return event.data.retry ? null : { runId: event.data.runId, outcome: 'skipped' };
  if (event.type === 'run.withdrawn') return { runId: event.data.runId, outcome: 'withdrawn' };
  if (event.type === 'run.ended') return { runId: event.data.runId, outcome: 'ended' };
  return null;
}

/**
 * How the frame's run was handled here, as recorded on it. Absent in frames recorded by older versions,
 * whose queue kept a ledger of every run it handled: replayed, their answer reads none.
 */
export function handledHere(frame: EventData<'frame.received'>): HandledOutcome | null {
  return frame.handled === undefined || frame.handled === 'live' ? null : frame.handled;
}

/**
 * A frame the shell recorded as about a live run that settled before it was decided: not recorded, the
 * shell looks in the log again and asks again.
 */
export function racedFrame(state: QueueState, frame: EventData<'frame.received'>): boolean {
  return frame.handled === 'live' && !state.runs[frame.runId];
}
