import type { Subscription } from 'rxjs';
import { type CloseSettings, DEFAULT_CLOSE_SETTINGS } from '../../../actors/session/closeSettings.ts';
import { execDriver } from '../../../adapters/tmux/execDriver.ts';
import type { SessionDriver } from '../../../adapters/tmux/sessionDriver.ts';
import { tmuxDriver } from '../../../adapters/tmux/tmuxDriver.ts';
import type { DomainEvent } from '../../../events/catalog.ts';
import { wordSessionReason } from '../../../events/sessionReasons.ts';
import { messageOf } from '../../../events/thrown.ts';
import type { Clock } from '../../../runtime/actors/clock.ts';
import { Outbox } from '../../../runtime/actors/outbox.ts';
import type { ActorSystem } from '../../../runtime/actors/runtime.ts';
import type { EventStore } from '../../../runtime/store/eventStore.ts';
import { sessionIntentConsumer, sessionKillConsumer } from './closeEffects.ts';
import { CloseIndex } from './closeIndex.ts';
import { closeRound, type RoundOutcome } from './closeRound.ts';
import { SessionActors } from './sessionActors.ts';
import { sessionStream } from './sessionStreams.ts';

export type DriverName = 'exec' | 'tmux';

export interface SessionCloserOptions {
  readonly system: ActorSystem;
  readonly store: EventStore;
  readonly clock: Clock;
  readonly computer: string;
  /** `exec` (the default), `tmux`, or a driver of one's own. */
  readonly driver?: DriverName | SessionDriver;
  readonly tmuxSocket?: string;
  readonly settings?: Partial<CloseSettings>;
  /** This process's claim lock; the store's `host:pid` by default. */
  readonly lock?: string;
  readonly killGraceMs?: number;
  readonly log?: (line: string) => void;
}

/**
 * The computer's session actors and what drives them: the intent each settled run records for its
 * session, a round every tick over the open closes, and the kills those rounds decide, each from its
 * own outbox. `runledger tick` uses the same pieces for exactly one round.
 */
export class SessionCloser {
  readonly actors: SessionActors;
  readonly index: CloseIndex;
  readonly driver: SessionDriver;
  readonly settings: CloseSettings;
  readonly lock: string;
  private readonly kills: Outbox<DomainEvent>;
  private readonly intents: Outbox<DomainEvent>;
  private readonly subscriptions: Subscription[] = [];
  private running: Promise<RoundOutcome[]> | null = null;
  private cancelTimer: (() => void) | null = null;
  private stopped = false;

  constructor(private readonly options: SessionCloserOptions) {
    const { system, store, clock, computer } = options;
    const now = () => clock.now();
    this.settings = { ...DEFAULT_CLOSE_SETTINGS, ...options.settings };
    this.lock = options.lock ?? store.writer;
    this.index = new CloseIndex(store, computer);
    this.actors = new SessionActors(system, store, computer, now);
    this.driver = driverOf(options, this.index);
    const ctx = { store, actors: this.actors, driver: this.driver, now };
    // Their stamps and waits (a log that cannot take a record) on the daemon's clock, as every outbox's: the simulator's is virtual.
    this.kills = new Outbox(store, sessionKillConsumer(ctx), clock);
    this.intents = new Outbox(store, sessionIntentConsumer(ctx), clock);
  }

  /**
   * Opens the outboxes (a consumer that never ran starts at the present: history is not replayed)
   * and finishes what is due in them, so a round never meets a kill nobody took.
   */
  async open(): Promise<void> {
    const head = await this.options.store.headSeq();
    await this.kills.open(head);
    await this.intents.open(head);
    await this.intents.drain();
    await this.kills.drain();
  }

  /** The daemon's way: effects as they are decided, and a round every tick. */
  async start(): Promise<void> {
    await this.open();
    this.subscriptions.push(this.intents.follow(), this.kills.follow());
    const loop = () => {
      this.cancelTimer = this.options.clock.after(this.settings.tickMs, () => {
        // What a round decides is in the log, and the daemon narrates it from there.
        void this.round()
          .catch((error) => this.options.log?.(`session round failed: ${messageOf(error)}`))
          .finally(() => {
            if (!this.stopped) loop();
          });
      });
    };
    loop();
  }

  /** One round; a round still running is not started again. Kills it decided are done when it resolves. */
  round(): Promise<RoundOutcome[]> {
    if (this.running) return this.running;
    this.running = (async () => {
      try {
        await this.intents.drain();
        const outcomes = await closeRound({
          actors: this.actors,
          driver: this.driver,
          settings: this.settings,
          lock: this.lock,
          now: () => this.options.clock.now(),
          openCloses: () => this.index.openCloses(),
        });
        if (!outcomes.some((o) => o.outcome === 'stopping')) return outcomes;
        await this.kills.drain();
        return await Promise.all(outcomes.map((o) => (o.outcome === 'stopping' ? this.afterKill(o) : o)));
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }

  /** A close this round decided to stop, as its kill left it (another process's outbox may still hold it). */
  private async afterKill(stopping: RoundOutcome): Promise<RoundOutcome> {
    const last = await this.options.store.lastOfStream(sessionStream(this.options.computer, stopping.key));
    if (last?.type === 'session.closed') return { ...stopping, outcome: 'closed', reason: wordSessionReason(last.data.reason) };
    if (last?.type === 'session.close.incident') return { ...stopping, outcome: 'failed', reason: wordSessionReason(last.data.reason) };
    return stopping;
  }

  stop(): void {
    this.stopped = true;
    this.cancelTimer?.();
    for (const subscription of this.subscriptions) subscription.unsubscribe();
    this.kills.stop();
    this.intents.stop();
    // A round under way finishes with its actors; then they go.
    if (this.running) void this.settled().then(() => this.actors.stop());
    else this.actors.stop();
  }

  /** Waits for a round under way (shutdown). */
  async settled(): Promise<void> {
    // A round that failed was told by the loop that ran it; here it is only waited for.
    await this.running?.catch(() => {
      // told by the loop that ran it
    });
  }
}

function driverOf(options: SessionCloserOptions, index: CloseIndex): SessionDriver {
  const driver = options.driver ?? 'exec';
  if (typeof driver !== 'string') return driver;
  if (driver === 'tmux') return tmuxDriver(options.tmuxSocket ? { socket: options.tmuxSocket } : {});
  return execDriver({ liveRuns: () => index.liveRuns(), ...(options.killGraceMs !== undefined ? { killGraceMs: options.killGraceMs } : {}) });
}
