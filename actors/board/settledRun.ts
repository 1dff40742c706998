import type { z } from 'zod';
import { CANCELLED_BY_USER, type RunPastSchema } from '../../events/boardEvents.ts';
import { wordBoardReason } from '../../events/boardReasons.ts';
import type { DomainEvent } from '../../events/catalog.ts';
import type { Usage } from '../../events/usage.ts';
import type { ChangeSummary } from '../../events/workspace.ts';

export type RunPast = z.infer<typeof RunPastSchema>;
export type SettledState = 'succeeded' | 'failed' | 'cancelled' | 'resolved';

/**
 * A run that settled, as its own stream (`run:<id>`) tells it (issue 16): a terminal run leaves the
 * board's state, so what a later request or `GET /v1/runs/{id}` wants of it is read from the log,
 * through the stream's index, in time independent of the log's length.
 */
export interface SettledRun {
  readonly runId: string;
  readonly lane: string;
  readonly state: SettledState;
  /** Who held its claim (null: cancelled before anyone claimed it). */
  readonly computerId: string | null;
  readonly reply: string | null;
  readonly error: string | null;
  readonly usage?: Usage;
  /** What its turn changed in its worktree, as its completion said. */
  readonly changes?: ChangeSummary;
  readonly submittedAt: number;
  readonly claimedAt: number | null;
}

/** A run's stream folded so far, event by event (`foldRunStream`): what `settledOf` reads its end from. */
export interface RunFold {
  lane: string | null;
  runId: string;
  computerId: string | null;
  reply: string | null;
  submittedAt: number;
  claimedAt: number | null;
  end: { state: SettledState; error: string | null; usage?: Usage; changes?: ChangeSummary } | null;
}

export function emptyRunFold(): RunFold {
  return { lane: null, runId: '', computerId: null, reply: null, submittedAt: 0, claimedAt: null, end: null };
}

/**
 * One event of a run's stream folded in: the same facts `evolveBoard` folded into the run before it
 * left the state. One fold for the host's read of a stream and for replay's recall of older inputs.
 */
export function foldRunStream(fold: RunFold, event: DomainEvent): void {
  // A computer's copy of the run (`c1/run:<id>`, in `readEntity`'s answer) is not the board's.
  if (event.stream.indexOf('/') !== -1) return;
  switch (event.type) {
    case 'board.run.queued':
      fold.runId = event.data.runId;
      fold.lane = event.data.lane;
      fold.submittedAt = event.at;
      break;
    case 'board.run.claimed':
      fold.computerId = event.data.computerId;
      fold.claimedAt = event.at;
      break;
    case 'board.run.replied':
      fold.reply = event.data.text;
      break;
    case 'board.run.cancelled':
      fold.end = { state: 'cancelled', error: CANCELLED_BY_USER };
      break;
    case 'board.run.finished':
      fold.end = {
        state: event.data.state,
        error: event.data.error ?? null,
        ...(event.data.usage ? { usage: event.data.usage } : {}),
        ...(event.data.changes ? { changes: event.data.changes } : {}),
      };
      break;
    case 'board.run.resolved':
      fold.end = { state: 'resolved', error: wordBoardReason(event.data.reason) };
      break;
    default:
      break;
  }
}

/** The run's end as folded, or null while the fold holds no run that settled (no such run, or one still live). */
export function settledOf({ lane, end, runId, computerId, reply, submittedAt, claimedAt }: RunFold): SettledRun | null {
  if (lane === null || end === null) return null;
  return { runId, lane, computerId, reply, submittedAt, claimedAt, ...end };
}

/**
 * Folds one run's stream into its end, or null when the stream holds no run that settled (no such
 * run, or one still live).
 */
export function settledRun(events: readonly DomainEvent[]): SettledRun | null {
  const fold = emptyRunFold();
  for (const event of events) foldRunStream(fold, event);
  return settledOf(fold);
}

/** What a request about a run not in the state records of it: its end, or null when the log has no such run. */
export function pastOf(run: SettledRun | null): Exclude<RunPast, 'live'> {
  return run === null ? null : { state: run.state, computerId: run.computerId };
}
