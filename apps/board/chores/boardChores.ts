import type { AdoptionState } from '../../../actors/board/adoption/adoptionState.ts';
import type { SessionDriver } from '../../../adapters/tmux/sessionDriver.ts';
import { messageOf } from '../../../events/thrown.ts';
import { adoptionsProjection } from '../../../projections/adoptions.ts';
import { type NoticesIndex, noticesProjection } from '../../../projections/notices.ts';
import type { AnyProjection } from '../../../projections/projection.ts';
import type { Clock } from '../../../runtime/actors/clock.ts';
import { foldLog } from '../../../runtime/folds/foldLog.ts';
import { type Folded, hydrateProjections } from '../../../runtime/folds/hydrate.ts';
import type { AppendLease, EventStore } from '../../../runtime/store/eventStore.ts';
import { type AdoptionBinder, type AdoptionReport, completeAdoptions, logOnlyBinder, type SessionListing } from './adoptions/adoptionRound.ts';
import { logSessionListing } from './adoptions/sessionListing.ts';
import type { HookCommands } from './hooks/hookNames.ts';
import { HookRunner, type RunHook } from './hooks/hookRunner.ts';
import { recordTick } from './hooks/tickHook.ts';
import { fileNotices, type LivenessReader, type NoticeReport, unreadableLiveness } from './notices/noticeRound.ts';

export interface BoardChoresOptions {
  readonly store: EventStore;
  readonly clock: Clock;
  readonly hooks: HookCommands;
  /** Where adoptions find sessions; the log's listing by default. */
  readonly listing?: SessionListing;
  readonly binder?: AdoptionBinder;
  /** How a session recorded ended (or never seen) is read; by default it cannot be, and its notices wait. */
  readonly liveness?: LivenessReader;
  readonly hookTimeoutMs?: number;
  readonly hookCwd?: string;
  readonly log?: (line: string) => void;
  /** Test seam (sim/): how hook commands are run. */
  readonly runHook?: RunHook;
  /**
   * Whether this board does the chores now (the holder of the chores' lease, on a log of several boards,
   * whose `store` then carries the lease on each append): always, on a board alone.
   */
  readonly mayRun?: () => boolean;
  /** The chores' lease `store` carries (with `mayRun`): hooks are taken, run and recorded under its epoch (effectConsumer.ts, EpochTakes). */
  readonly lease?: () => AppendLease | null;
}

export interface ChoresReport {
  readonly adoptions: AdoptionReport;
  readonly notices: NoticeReport;
  /** Hooks this round took and started (they end in the background). */
  readonly hooksStarted: number;
}

/**
 * The board's part of a round that is not a session's close (docs/rules.md#sessions-hooks-notifications): adoptions, then
 * notifications, then the tick, then the hooks all of it called for. Everything is claimed by an
 * append at an expected version, so two processes running rounds on one file (the daemon's, and a
 * one-shot `runledger tick`) never act twice on one adoption, one notice or one hook.
 */
export class BoardChores {
  readonly hooks: HookRunner;
  private readonly index: FollowedFold;

  constructor(private readonly options: BoardChoresOptions) {
    this.hooks = new HookRunner({
      store: options.store,
      clock: options.clock,
      commands: options.hooks,
      ...(options.hookTimeoutMs !== undefined ? { timeoutMs: options.hookTimeoutMs } : {}),
      ...(options.hookCwd ? { cwd: options.hookCwd } : {}),
      ...(options.log ? { log: options.log } : {}),
      ...(options.runHook ? { runHook: options.runHook } : {}),
      ...(options.lease ? { lease: options.lease } : {}),
    });
    this.index = new FollowedFold(options.store, [noticesProjection, adoptionsProjection] as readonly AnyProjection[]);
  }

  /**
   * Settles hooks a dead board left (with hooks or not: a hook it cut is recorded interrupted either
   * way), and starts the hooks cursor at the present if hooks never ran on this log.
   */
  async start(): Promise<void> {
    await this.hooks.open(this.hooks.active ? await this.options.store.headSeq() : undefined);
    await this.index.catchUp();
  }

  async round(): Promise<ChoresReport> {
    const { store, clock } = this.options;
    await this.index.catchUp();
    const adoptions = await completeAdoptions(
      { store, clock, listing: this.options.listing ?? logSessionListing(store), binder: this.options.binder ?? logOnlyBinder },
      this.index.state<Record<string, AdoptionState>>(adoptionsProjection.name),
    );
    const notices = await fileNotices(
      { store, clock, liveness: this.options.liveness ?? unreadableLiveness },
      this.index.state<NoticesIndex>(noticesProjection.name),
    );
    await recordTick(store, clock, this.options.hooks, {
      adopted: adoptions.adopted.length,
      adoptionsFailed: adoptions.failed.length,
      noticesFiled: notices.filed.reduce((sum, [, n]) => sum + n, 0),
    });
    const hooksStarted = await this.hooks.drain();
    return { adoptions, notices, hooksStarted };
  }

  /** Takes no more hooks, and waits (up to `settleMs`) for those running to end and be recorded. */
  async stop(settleMs = 0): Promise<void> {
    this.hooks.stop();
    if (settleMs > 0) await this.hooks.settle(settleMs);
  }
}

export interface RunningChores {
  readonly chores: BoardChores;
  /** Runs no more rounds, then waits up to `settleMs` for running hooks (those cut later are recorded interrupted). */
  stop(settleMs?: number): Promise<void>;
}

/** How often a board that may not do the chores asks again whether it may (it took the lease over). */
const LEASE_WATCH_MS = 1_000;

/**
 * The board's chores as the daemon and the server run them: a round every `everyMs`, and hooks taken
 * as soon as their decisions commit (between rounds too), while `mayRun` says so. A board that takes
 * the lease over starts them within LEASE_WATCH_MS (its first round at once: what the last holder left
 * is taken now); one that lost it stops taking hooks, and takes them up again from the log if it holds it again.
 * A board that holds another epoch than the one it started them under (it lost the lease and took it
 * back between two looks) starts them again too: the takes of the epochs between are settled on opening.
 */
export async function startBoardChores(options: BoardChoresOptions, everyMs: number): Promise<RunningChores> {
  const mayRun = options.mayRun ?? (() => true);
  const chores = new BoardChores(options);
  let following: { unsubscribe(): void } | null = null;
  let started = false;
  /** The lease's epoch the chores were started under (0: none, or no lease). */
  let startedUnder = 0;
  const epoch = () => options.lease?.()?.epoch ?? 0;
  let lastRound = Number.NEGATIVE_INFINITY;
  const begin = async () => {
    startedUnder = epoch();
    await chores.start();
    following = chores.hooks.active ? chores.hooks.follow() : null;
    started = true;
  };
  const end = () => {
    following?.unsubscribe();
    following = null;
    started = false;
  };
  if (mayRun()) await begin();
  lastRound = options.clock.now();
  let cancel: (() => void) | null = null;
  let stopped = false;
  let running: Promise<unknown> = Promise.resolve();
  const step = async () => {
    if (!mayRun()) return end();
    if (started && epoch() !== startedUnder) end();
    const fresh = !started;
    if (fresh) await begin();
    if (!fresh && options.clock.now() - lastRound < everyMs) return;
    lastRound = options.clock.now();
    await chores.round();
  };
  const loop = () => {
    cancel = options.clock.after(options.mayRun ? Math.min(everyMs, LEASE_WATCH_MS) : everyMs, () => {
      running = step()
        .catch((error) => options.log?.(`board round failed: ${messageOf(error)}`))
        .finally(() => {
          if (!stopped) loop();
        });
    });
  };
  loop();
  return {
    chores,
    async stop(settleMs = 5_000) {
      stopped = true;
      cancel?.();
      end();
      await running;
      await chores.stop(settleMs);
    },
  };
}

/** Liveness read through a session driver (the daemon's own computer's), when there is one. */
export function driverLiveness(driver: () => SessionDriver | null): LivenessReader {
  return {
    async read(sessionId) {
      const found = driver();
      if (found === null) throw new Error('no session driver on this board can read it');
      return (await found.read({ sessionId, bound: true, pid: null })).presence;
    },
  };
}

/** Projections kept current by reading the log's tail at each round: from their checkpoints at first. */
class FollowedFold {
  private folded: Map<string, Folded> | null = null;

  constructor(
    private readonly store: EventStore,
    private readonly projections: readonly AnyProjection[],
  ) {}

  async catchUp(): Promise<void> {
    if (this.folded === null) {
      this.folded = await hydrateProjections(this.store, this.projections);
      return;
    }
    const entries = [...this.folded.values()];
    await foldLog(this.store, Math.min(...entries.map((f) => f.seq)), (event) => {
      for (const f of entries) {
        if (event.seq <= f.seq) continue;
        f.state = f.projection.evolve(f.state, event);
        f.seq = event.seq;
      }
    });
  }

  state<S>(name: string): S {
    const f = this.folded?.get(name);
    if (!f) throw new Error(`the ${name} projection is not folded yet`);
    return f.state as S;
  }
}
