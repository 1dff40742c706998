import type { z } from 'zod';
import { CANCELLED_BY_USER, type RunPastSchema } from '../../events/boardEvents.ts';
import type { DomainEvent } from '../../events/catalog.ts';
import type { Usage } from '../../events/usage.ts';

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
  readonly submittedAt: number;
  readonly claimedAt: number | null;
}

/**
 * Folds one run's stream into its end, or null when the stream holds no run that settled (no such
 * run, or one still live). The same facts `evolveBoard` folded into the run before it left the state.
 */
export function settledRun(events: readonly DomainEvent[]): SettledRun | null {
  let lane: string | null = null;
  let runId = '';
  let computerId: string | null = null;
  let reply: string | null = null;
  let submittedAt = 0;
  let claimedAt: number | null = null;
  let end: { state: SettledState; error: string | null; usage?: Usage } | null = null;
  for (const event of events) {
    // A computer's copy of the run (`c1/run:<id>`, in `readEntity`'s answer) is not the board's.
    if (event.stream.indexOf('/') !== -1) continue;
    switch (event.type) {
      case 'board.run.queued':
        ({ runId, lane } = event.data);
        submittedAt = event.at;
        break;
      case 'board.run.claimed':
        computerId = event.data.computerId;
        claimedAt = event.at;
        break;
      case 'board.run.replied':
        reply = event.data.text;
        break;
      case 'board.run.cancelled':
        end = { state: 'cancelled', error: CANCELLED_BY_USER };
        break;
      case 'board.run.finished':
        end = { state: event.data.state, error: event.data.error ?? null, ...(event.data.usage ? { usage: event.data.usage } : {}) };
        break;
      case 'board.run.resolved':
        end = { state: 'resolved', error: event.data.reason };
        break;
      default:
        break;
    }
  }
  if (lane === null || end === null) return null;
  return { runId, lane, computerId, reply, submittedAt, claimedAt, ...end };
}

/** What a request about a run not in the state records of it: its end, or null when the log has no such run. */
export function pastOf(run: SettledRun | null): Exclude<RunPast, 'live'> {
  return run === null ? null : { state: run.state, computerId: run.computerId };
}
