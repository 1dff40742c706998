import { parseStream } from '../../events/envelope.ts';
import { exhausted } from '../../events/exhaustive.ts';
import { queueEvents } from '../../events/queueEvents.ts';
import { decider } from '../decider.ts';
import { decideQueue, pickNextRuns, QUEUE_INPUTS, QUEUE_MESSAGES, type QueueDecision, type QueueInput } from './decideQueue.ts';
import { evolveQueue } from './evolveQueue.ts';
import { handledRecall } from './handledRecall.ts';
import { racedFrame } from './handledRun.ts';
import { initialQueueState, type QueueState } from './queueState.ts';

/** One computer's queue: which run starts next, and what a claim's answer does to it. */
export const queueDecider = decider<QueueState, QueueInput, QueueDecision>({
  name: 'queue',
  inputs: QUEUE_INPUTS,
  scopeOf(event) {
    // Checked first because it is cheap: a rebuild asks this of every event in the log.
    if (!Object.hasOwn(queueEvents, event.type)) return null;
    // A computer's `<owner>/lane:…` or `<owner>/computer:…`, read in place: a replay asks this of
    // millions of events, and taking the name apart would allocate for each.
    const { stream } = event;
    const slash = stream.indexOf('/');
    if (slash === -1) return null;
    return stream.startsWith('lane:', slash + 1) || stream.startsWith('computer:', slash + 1) ? stream.slice(0, slash) : null;
  },
  // Its runs' settles (and paused completions) free their slot and lane: decisions of the run actor in
  // `<computer>/run:<id>`, read as the queue's input. In logs of older versions each was followed by the
  // queue's own input, `run.execution.ended`, which is decided there (nothing cites the settle then).
  messages: QUEUE_MESSAGES,
  messageScopeOf(event) {
    if (event.type !== 'run.settled' && event.type !== 'run.completion.paused') return null;
    const { owner, kind } = parseStream(event.stream);
    return owner !== null && kind === 'run' ? owner : null;
  },
  initialState: initialQueueState,
  decide: decideQueue,
  react: pickNextRuns,
  // Frames of older versions carry no `handled`: replay gives them what the shell would have read.
  recall: handledRecall,
  ignores(state, input) {
    switch (input.type) {
      case 'timer.fired': {
        // Late or twice: only a waiting run whose wait is over is woken.
        const run = state.runs[input.data.runId];
        return run?.status !== 'waiting' || run.notBefore > input.at || run.notBefore === 0;
      }
      case 'claim.answered':
        return state.runs[input.data.runId]?.status !== 'claiming';
      case 'run.limit.reported':
        return state.runs[input.data.runId]?.status !== 'running';
      case 'login.limit.due': {
        // Early, or for a limit no longer known: nothing to wake.
        const limit = state.loginLimits?.[input.data.login];
        return !limit || limit.until > input.at;
      }
      case 'run.start.failed':
      case 'run.execution.ended':
      case 'run.settled':
      case 'run.completion.paused':
        return !state.runs[input.data.runId];
      case 'frame.received':
        // Decided, if only acknowledged, unless its run settled after the shell looked (see `racedFrame`).
        return racedFrame(state, input.data);
      case 'computer.started':
      case 'computer.configured':
      case 'scheduler.held':
      case 'drain.started':
      case 'frame.refused':
        return false;
      default:
        return exhausted(input, false);
    }
  },
  evolve: evolveQueue,
});
