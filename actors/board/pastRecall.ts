import type { DomainEvent } from '../../events/catalog.ts';
import type { InputRecall } from '../decider.ts';
import type { BoardState } from './boardState.ts';
import type { BoardInput } from './decideBoard.ts';
import { emptyRunFold, foldRunStream, pastOf, type RunFold, type RunPast, settledOf } from './settledRun.ts';

/**
 * Replay's upcast of a request recorded before requests carried `past` (issue 16): an older board's
 * state still held every run it answered about, so such a claim, cancel, reply or completion of a run
 * that had settled was decided from the run itself. Its state no longer holds settled runs, so the
 * input gets the `past` the host would have read from the run's stream: the end of the run as the
 * events before the input in the log tell it. Memory: one fold per live run, one small end per
 * settled one. A replay that starts from a snapshot has not seen the runs that settled before it.
 */
export function pastRecall(): InputRecall<BoardState, BoardInput> {
  const live = new Map<string, RunFold>();
  const settled = new Map<string, { readonly past: Exclude<RunPast, 'live'>; readonly seq: number }>();
  return {
    note(event: DomainEvent) {
      if (!event.stream.startsWith('run:')) return;
      const runId = event.stream.slice('run:'.length);
      if (settled.has(runId)) return;
      const fold = live.get(runId) ?? emptyRunFold();
      foldRunStream(fold, event);
      const end = settledOf(fold);
      if (end === null) live.set(runId, fold);
      else {
        live.delete(runId);
        settled.set(runId, { past: pastOf(end), seq: event.seq });
      }
    },
    fill(state, input, seq) {
      switch (input.type) {
        case 'board.claim.requested':
        case 'board.cancel.requested':
        case 'board.reply.received':
        case 'board.completion.received': {
          const { runId } = input.data;
          if (input.data.past !== undefined || state.runs[runId]) return input;
          const end = settled.get(runId);
          // No end before it: the host would have read none either (`past: null` decides as no past).
          if (end === undefined || end.seq >= seq) return input;
          return { ...input, data: { ...input.data, past: end.past } } as BoardInput;
        }
        default:
          return input;
      }
    },
  };
}
