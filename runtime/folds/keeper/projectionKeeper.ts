import { type Observable, Subject, type Subscription } from 'rxjs';
import type { DomainEvent } from '../../../events/catalog.ts';
import { messageOf } from '../../../events/thrown.ts';
import type { AnyProjection } from '../../../projections/projection.ts';
import type { Clock } from '../../actors/clock.ts';
import { type FailureLog, stderrLog } from '../../actors/untilRecorded.ts';
import type { EventStore } from '../../store/eventStore.ts';
import { type Folded, hydrateProjections, saveCheckpoints } from '../hydrate.ts';

/**
 * Events folded between two checkpoints at most. A daemon killed at any moment (power loss, OOM) starts
 * again by folding the tail past its last checkpoint, once for each reader that hydrates from them: by
 * time alone, a busy minute's tail (70,000 events after 3,500 runs) took 15 s. The states are small
 * (a few KB: finished runs are forgotten), so a save every thousand events costs little.
 */
export const CHECKPOINT_EVERY_EVENTS = 1_000;

/**
 * Keeps every projection current by following the log, and checkpoints them every minute and every
 * CHECKPOINT_EVERY_EVENTS events, so the next start (and `status`, `replay --until`) folds only a short
 * tail past the last checkpoint, whatever the log's length and however the last life ended.
 */
export class ProjectionKeeper {
  private folded = new Map<string, Folded>();
  private subscription: Subscription | null = null;
  private cancelTimer: (() => void) | null = null;
  private savedAt = 0;
  private saving = false;
  private readonly checkpointEveryMs: number;
  /** The daemon's log (stderr when not given): a checkpoint not saved, which is only late. */
  private readonly log: FailureLog;
  private readonly foldedEvents = new Subject<DomainEvent>();
  /**
   * Each event of the log, in order, once every projection has folded it. A reader that follows the log
   * to read `state` after it (the web view's live pages) follows this, never a subscription of its own:
   * two followers of one log do not hear of a commit at the same moment (another writer's commit reaches
   * each at its own poll), so a reader woken by one may read the other's projections before they hold it.
   */
  readonly folds: Observable<DomainEvent> = this.foldedEvents.asObservable();

  constructor(
    private readonly store: EventStore,
    private readonly projections: readonly AnyProjection[],
    private readonly clock: Clock,
    options: { readonly checkpointEveryMs?: number; readonly log?: FailureLog } = {},
  ) {
    this.checkpointEveryMs = options.checkpointEveryMs ?? 60_000;
    this.log = options.log ?? stderrLog;
  }

  async start(): Promise<void> {
    this.folded = await hydrateProjections(this.store, this.projections);
    const from = Math.min(...[...this.folded.values()].map((f) => f.seq));
    this.savedAt = Math.max(0, ...[...this.folded.values()].map((f) => f.seq));
    this.subscription = this.store.subscribe(from).subscribe((event) => {
      for (const f of this.folded.values()) {
        if (event.seq <= f.seq) continue;
        f.state = f.projection.evolve(f.state, event);
        f.seq = event.seq;
      }
      this.foldedEvents.next(event);
      if (event.seq - this.savedAt >= CHECKPOINT_EVERY_EVENTS && !this.saving) void this.checkpoint().catch(this.notSaved('the next one saves it'));
    });
    const loop = () => {
      // A checkpoint the log cannot take now (a full disk) is only late: the next round saves it.
      this.cancelTimer = this.clock.after(
        this.checkpointEveryMs,
        () => void this.checkpoint().catch(this.notSaved('the next round saves it')).finally(loop),
      );
    };
    loop();
  }

  /** The state of one projection as of the last event folded; read it, do not keep or change it. */
  state<S>(name: string): S {
    const f = this.folded.get(name);
    if (!f) throw new Error(`no projection named ${name}`);
    return f.state as S;
  }

  async checkpoint(): Promise<void> {
    const head = Math.max(0, ...[...this.folded.values()].map((f) => f.seq));
    if (head === this.savedAt || this.saving) return;
    this.saving = true;
    try {
      await saveCheckpoints(this.store, this.folded.values());
      this.savedAt = head;
    } finally {
      this.saving = false;
    }
  }

  async stop(): Promise<void> {
    this.cancelTimer?.();
    this.subscription?.unsubscribe();
    this.foldedEvents.complete();
    // Not saved now, the next start folds a little more of the log: the daemon stops either way.
    await this.checkpoint().catch(this.notSaved('the next start folds from the last one'));
  }

  private notSaved(then: string): (error: unknown) => void {
    return (error) => this.log(`projection checkpoint not saved (${messageOf(error)}): ${then}`);
  }
}
