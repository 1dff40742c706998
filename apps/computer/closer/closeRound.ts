import { type Holder, holdsClaim } from '../../../actors/session/claims.ts';
import { type CloseSettings, gapMs } from '../../../actors/session/closeSettings.ts';
import type { SessionClose } from '../../../actors/session/sessionState.ts';
import { writerOf } from '../../../actors/writer.ts';
import type { SessionDriver } from '../../../adapters/tmux/sessionDriver.ts';
import type { Activity } from '../../../events/sessionEvents.ts';
import { wordSessionReason } from '../../../events/sessionReasons.ts';
import { messageOf } from '../../../events/thrown.ts';
import { isProcessAlive } from '../../../runtime/actors/processes.ts';
import type { SessionActors } from './sessionActors.ts';
import { sessionStream } from './sessionStreams.ts';

export interface RoundContext {
  readonly actors: SessionActors;
  readonly driver: SessionDriver;
  readonly settings: CloseSettings;
  /** This process's claim lock, `host:pid`. */
  readonly lock: string;
  readonly now: () => number;
  readonly openCloses: () => Promise<string[]>;
}

export type RoundOutcomeKind = 'held' | 'stopping' | 'deferred' | 'closed' | 'failed' | 'settled';

/** What one round did with one close, for the daemon's log and `runledger tick`. */
export interface RoundOutcome {
  readonly key: string;
  readonly sessionId: string;
  readonly outcome: RoundOutcomeKind;
  readonly reason: string;
}

/**
 * One round over a computer's open closes (docs/rules.md#sessions-hooks-notifications): each is claimed in the transaction that
 * finds it open, then read, last, just before the kill, and decided from that reading. A close
 * another live process claimed is left to it, and nothing is recorded of it here.
 */
export async function closeRound(ctx: RoundContext): Promise<RoundOutcome[]> {
  const outcomes: RoundOutcome[] = [];
  for (const key of await ctx.openCloses()) outcomes.push(await closeOne(ctx, key));
  return outcomes;
}

async function closeOne(ctx: RoundContext, key: string): Promise<RoundOutcome> {
  const { actors, lock, settings } = ctx;
  const stream = sessionStream(actors.computer, key);
  const claimed = await actors.step(key, (state, at) =>
    state.open
      ? {
          stream,
          type: 'session.close.due',
          data: { sessionId: state.sessionId ?? key, lock, ttlMs: settings.ttlMs, holder: holderOf(state, lock) },
          at,
        }
      : null,
  );
  const state = claimed.state;
  const sessionId = state.sessionId ?? key;
  const said = (outcome: RoundOutcomeKind, reason: string): RoundOutcome => ({ key, sessionId, outcome, reason });
  if (!state.open)
    return said(
      'settled',
      state.confirmedAt !== null ? 'closed already' : `failed already: ${state.failure === null ? '' : wordSessionReason(state.failure)}`,
    );
  if (!holdsClaim(state.claim, lock, ctx.now())) return said('held', `claimed by ${state.claim?.lock ?? 'another process'}`);
  if (state.killing) return said('stopping', `its kill (attempt ${state.killing.attempt}) is under way`);

  // Read last: after the claim committed, just before the kill it may decide.
  let activity: Activity | null = null;
  let failure: string | null = null;
  try {
    activity = await ctx.driver.read({ sessionId, bound: state.bound, pid: state.pid });
  } catch (error) {
    failure = (messageOf(error) || String(error)).slice(0, 1000);
  }
  const settingsRead = { quietMs: settings.quietMs, gapMs: gapMs(settings), launchWindowMs: settings.launchWindowMs };
  const read = await actors.step(key, (_, at) => ({
    stream,
    type: 'session.read',
    data: { sessionId, lock, activity, failure, settings: settingsRead },
    at,
  }));
  const decision = read.decisions[0];
  if (!decision) return said('held', 'its claim was lost before the reading was recorded');
  switch (decision.type) {
    case 'session.kill.requested':
      return said('stopping', wordSessionReason(decision.data.reason));
    case 'session.closed':
      return said('closed', wordSessionReason(decision.data.reason));
    case 'session.close.deferred':
      return said('deferred', wordSessionReason(decision.data.reason));
    case 'session.close.incident':
      return said('failed', wordSessionReason(decision.data.reason));
    default:
      return said('held', decision.type);
  }
}

/**
 * The claim the round found, with whether its process is alive: readable on this host only (a pid
 * elsewhere means nothing here), and recorded in the round's input for the decision to read.
 */
function holderOf(state: Readonly<SessionClose>, lock: string): Holder | null {
  if (state.claim === null) return null;
  const claimLock = state.claim.lock;
  const holder = writerOf(claimLock);
  if (holder.host !== writerOf(lock).host) return { lock: claimLock, alive: null };
  return { lock: claimLock, alive: holder.pid !== null && isProcessAlive(holder.pid) };
}
