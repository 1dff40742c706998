import { type Observable, Subject, type Subscription } from 'rxjs';
import type { QueueState } from '../actors/lane/queueState.ts';
import type { DomainEvent } from '../events/catalog.ts';
import { messageOf } from '../events/thrown.ts';
import { type CloseState, closeProjection } from '../projections/close.ts';
import { laneSessionsProjection } from '../projections/laneSessions.ts';
import { queueProjection } from '../projections/queue.ts';
import type { FailureLog } from '../runtime/actors/untilRecorded.ts';
import type { ComputerEvents } from '../runtime/store/computerEvents.ts';

const PAGE = 500;

/** The folds the board page reads for each computer, of the events computers with logs of their own reported. */
export interface ReportedStates {
  readonly queues: Record<string, QueueState>;
  readonly laneSessions: Record<string, Record<string, string>>;
  readonly closes: CloseState;
}

/**
 * A remote computer's queue, slots and sessions as the board page shows them: the same folds the
 * board runs on its own log (where a computer sharing its file writes them), run here on the events
 * computers reported (each computer's in its own seq order, as they were kept). Every fold is keyed
 * by computer, so these and the log's never meet; in memory only, read again at each start.
 */
export class ReportedFolds {
  private position = 0;
  private readonly state: ReportedStates = {
    queues: queueProjection.initial(),
    laneSessions: laneSessionsProjection.initial(),
    closes: closeProjection.initial(),
  };
  private reading: Promise<void> | null = null;
  private again = false;
  private readonly subscription: Subscription;
  private readonly foldedEvents = new Subject<DomainEvent>();
  /**
   * Each reported event once it is folded here, in the order kept: the live pages hear of a remote
   * computer's half as of the board's own events (a freed slot, a run's timeline, a lane's turns),
   * and the board page's status read after it shows it.
   */
  readonly folded: Observable<DomainEvent> = this.foldedEvents.asObservable();

  constructor(
    private readonly reported: ComputerEvents,
    kept: Observable<void>,
    private readonly log: FailureLog,
  ) {
    this.subscription = kept.subscribe(() => void this.catchUp());
    void this.catchUp();
  }

  /** The folds as of the last read (a report lands on the page with the next snapshot after it is read). */
  states(): ReportedStates {
    return this.state;
  }

  /** Reads what was kept since the last read, one read at a time (a report during it reads once more). */
  catchUp(): Promise<void> {
    if (this.reading) {
      this.again = true;
      return this.reading;
    }
    // Its `finally` runs right as its loop ends, in the same step (it always awaits a read first, so
    // after this assignment): a report told in between cannot find a read that is over as the one under way.
    this.reading = (async () => {
      try {
        do {
          this.again = false;
          for (;;) {
            const page = await this.reported.readAll(this.position, PAGE);
            for (const { position, event } of page) {
              queueProjection.evolve(this.state.queues, event);
              laneSessionsProjection.evolve(this.state.laneSessions, event);
              closeProjection.evolve(this.state.closes, event);
              this.position = position;
            }
            for (const { event } of page) this.foldedEvents.next(event);
            if (page.length < PAGE) break;
          }
        } while (this.again);
      } catch (error) {
        this.log(`web view: the computers' reported events could not be read (${messageOf(error)}); the next report tries again`);
      } finally {
        this.reading = null;
      }
    })();
    return this.reading;
  }

  stop(): void {
    this.subscription.unsubscribe();
    this.foldedEvents.complete();
  }
}
