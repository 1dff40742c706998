import * as z from 'zod';
import type { DomainEvent } from '../events/catalog.ts';

/**
 * An event of an outbox's stream that settles one effect (`data.effect`, its seq): how it ended, or
 * that its taker died before that. The outbox's own are `outbox.performed` and `outbox.interrupted`;
 * a consumer may say more in its own (a hook's says how its command exited).
 */
export type SettlingEvent = Extract<DomainEvent, { data: { effect: number } }>;

export function settles(event: DomainEvent): event is SettlingEvent {
  return 'effect' in event.data;
}

/**
 * What an outbox knows on opening, as of `version` of its stream (its own fold of it, kept in the
 * checkpoints under the stream's name so a start reads only the stream's tail): every event up to
 * `cursor` was taken or calls for nothing here, and the effects taken and not yet settled, each with
 * the seq of its take. `cursor` may be past the last take: an event that calls for nothing is read
 * past in memory, and only this mark remembers it (from the log alone: `effectOf` and `needed` are).
 */
export interface OutboxMark {
  version: number;
  cursor: number;
  pending: Record<string, number>;
}

/**
 * A mark as this version writes it. One of another shape (another version's, a damaged row) is not
 * read at all: the outbox folds its stream from the start, as before marks, rather than crash its
 * start or take a cursor it cannot vouch for (an effect past it would be neither done nor interrupted).
 */
const OutboxMarkSchema = z.strictObject({
  version: z.number().int().nonnegative(),
  cursor: z.number().int().nonnegative(),
  pending: z.record(z.string().regex(/^[1-9][0-9]*$/), z.number().int().positive()),
});

/** The mark a checkpoint holds, or null when it is of another shape (or no JSON at all). */
export function parseMark(state: string): OutboxMark | null {
  try {
    const mark = OutboxMarkSchema.safeParse(JSON.parse(state));
    return mark.success ? mark.data : null;
  } catch {
    return null;
  }
}

export function readMark(state: string | undefined): OutboxMark {
  return (state === undefined ? null : parseMark(state)) ?? { version: 0, cursor: 0, pending: {} };
}

/** The mark moved on by its stream's `events` (those past its version). */
export function foldMark(mark: OutboxMark, events: readonly DomainEvent[]): OutboxMark {
  for (const event of events) {
    mark.version = event.version;
    if (event.type === 'outbox.taken') {
      mark.cursor = Math.max(mark.cursor, event.data.through);
      for (const effect of event.data.effects) mark.pending[effect] = event.seq;
    } else if (settles(event)) {
      delete mark.pending[event.data.effect];
    }
  }
  return mark;
}
