import type { DomainEvent, NewDomainEvent } from '../../events/catalog.ts';
import type { AppendLease } from '../store/eventStore.ts';
import type { FailureLog } from './untilRecorded.ts';

/*
 * What an outbox (outbox.ts) is told of the effects it takes: which events call for them, how they are
 * performed, and what a crash leaves of them.
 */

export type Delivery = 'at-least-once' | 'at-most-once';

type Worded<R> = R extends { type: infer T; data: infer D } ? { readonly type: T; readonly data: D } : never;
/** A settling record as a consumer words it: the outbox adds its stream and time. */
export type EffectRecord = Worded<Extract<NewDomainEvent, { data: { effect: number } }>>;

/**
 * How an effect ended: recorded as `outbox.performed`, or in the consumer's own words, or (`answered`)
 * by the input the effect itself recorded (a claim's answer, a process's start, a completion's
 * answer): for a consumer whose takes are implicit, that input settles it and nothing more is written.
 */
export type Outcome = { readonly ok: boolean; readonly detail?: string } | { readonly record: EffectRecord } | { readonly answered: string };

/**
 * Takes without an `outbox.taken`, for a consumer whose effects are decided only by the process that
 * performs them (a computer's: one process holds its log, `processLock.ts`): the commit of the
 * decision is its take, by its writer, and an effect is settled by the input that answers it, so
 * nothing is written for either on the way of a run. After a crash the next life finds the dead
 * life's effects that no input settled and settles them as the delivery says, as for an explicit take.
 */
export interface ImplicitTakes {
  /** What an effect is about (its run's stream, say): an input `settles` names it. */
  key(effect: DomainEvent): string;
  /** The key of the effects this event settles (those before it), or null. */
  settles(event: DomainEvent): string | null;
}

/**
 * One kind of effect and who performs it. `effectOf` is pure: it says which committed events call
 * for this effect, so the record of an effect is the decision itself, in the decision's transaction.
 */
export interface EffectConsumer<E> {
  readonly name: string;
  /**
   * `at-least-once` effects (calls to the board, idempotent on run_id) are performed again when a
   * crash cut them; `at-most-once` ones (a hook command, a kill) are recorded as interrupted instead.
   */
  readonly delivery: Delivery;
  /**
   * How many of its effects may be under way at once (1 when absent: one after another). Effects are
   * started in log order either way; with more than one, a slow one (a call to the board, a spawn)
   * no longer holds back those of other runs behind it.
   */
  readonly concurrency?: number;
  effectOf(event: DomainEvent): E | null;
  /**
   * Whether an effect calls for anything after all, answered from the log alone (so the same at every
   * reading): one that does not is stepped past like an event that calls for none, neither taken nor
   * recorded. For effects that most often turn out to be nothing (a settled run that ran in no session).
   */
  needed?(effect: E, event: DomainEvent): Promise<boolean>;
  /**
   * `mayStart` (given by the outbox) says whether this process may still start the effect: false once the
   * lease it was taken under is no longer this process's (always true without a lease). Asked last, just before what cannot
   * be undone (a hook's spawn), with nothing awaited between: the holder of the next epoch may have
   * recorded the effect interrupted already, and it must not run after that.
   */
  perform(effect: E, event: DomainEvent, mayStart?: () => boolean): Promise<Outcome>;
  /** Takes recorded by the decisions themselves (see ImplicitTakes); `needed` is then not asked. */
  readonly implicit?: ImplicitTakes;
  /**
   * The record of an at-most-once effect whose taker (`take` is its take) died before recording its
   * end, when `outbox.interrupted` does not say enough; `event` is undefined when this version cannot
   * read the effect's row.
   */
  interrupted?(effect: number, event: DomainEvent | undefined, take: DomainEvent): EffectRecord;
  /**
   * Effects nobody waits for (a hook: a slow one holds up neither the round nor the other hooks): a
   * drain starts them and resolves with how many it started, `settle` waits for their ends, and a
   * failure meanwhile (a record the log refused) is told to `log`. Without it, a drain waits for its
   * effects, and such a failure fails the drain.
   */
  readonly background?: { readonly log: FailureLog };
  /**
   * The lease this process holds now (epoch 0: none), on a log several boards share (docs/rules.md#postgresql-board: a board's
   * chores): see EpochTakes. Without it, a take's taker is told gone by probing its process.
   */
  readonly lease?: () => AppendLease | null;
}

/*
 * EpochTakes: an outbox with a `lease` takes its effects under the lease's epoch (in the take's append,
 * checked in its transaction, and named in it), starts each only while that epoch is still the one it
 * holds, and records its end under that same epoch (the record refused once it is no longer the lease's).
 * So a holder of any other epoch can settle a take of an earlier one that nothing settled as interrupted,
 * whoever took it and whether or not it still runs (a process on another host cannot be probed; a
 * paused one wakes to find the lease gone): the taker, if it lives, can neither start that effect after
 * nor record a second end for it. A take of the epoch this process holds is its own (the epoch grows at
 * each change of holder): gone only when it is not performing it. Liveness rows (board_processes) would
 * not do: a paused board's row goes stale and fresh again, and a live board that lost the lease could
 * record its end beside the next holder's interruption, or, refused, leave the effect settled by nobody.
 */

/**
 * For consumers whose effects each belong to one run (a claim, a spawn, a kill, a completion): those
 * of different runs do not depend on each other, and a run's own come one at a time from its actor.
 */
export const RUN_EFFECTS_AT_ONCE = 16;
