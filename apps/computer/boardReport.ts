import type { Subscription } from 'rxjs';
import type { BoardAnswer } from '../../adapters/http/boardClient.ts';
import type { DomainEvent } from '../../events/catalog.ts';
import { parseStream } from '../../events/envelope.ts';
import { messageOf } from '../../events/thrown.ts';
import { fullJitterMs } from '../../runtime/actors/backoff.ts';
import type { Clock } from '../../runtime/actors/clock.ts';
import type { FailureLog } from '../../runtime/actors/untilRecorded.ts';
import { REPORT_LIMITS, type ReportedRow } from '../../runtime/store/computerEvents.ts';
import type { EventStore } from '../../runtime/store/eventStore.ts';

/** The kinds of a computer's streams the board keeps a copy of: its runs', its lanes' (their queues), its sessions' and its own (slots). */
const REPORTED_KINDS = new Set(['run', 'lane', 'session', 'computer']);
/** How long events gather before a batch goes (a turn's burst of decisions goes as one call). */
const GATHER_MS = 100;
/** A failed call's next try, while stopping: soon, within the stop's own bound. */
const STOPPING_RETRY_MS = 100;
/** How much of the log a stop reads to count what did not reach the board (pages of `batchEvents`). */
const COUNT_PAGES = 20;

export interface BoardReportOptions {
  readonly store: Pick<EventStore, 'subscribe' | 'checkpoints' | 'readAll' | 'headSeq' | 'settle'>;
  readonly computer: string;
  readonly send: (events: readonly ReportedRow[]) => Promise<BoardAnswer>;
  /** Ends a call in flight (the client's sockets closed): a stop past its bound does not wait for a silent board. */
  readonly abandon?: () => void;
  readonly clock: Clock;
  readonly log: FailureLog;
  /** Drawn here, outside any decider: only the retries' timing depends on it. */
  readonly random?: () => number;
}

type Step = 'sent' | 'caught up' | 'again later';

/**
 * Sends the board a copy of this computer's own events (its runs', lanes', sessions' and its own) after
 * their commit, so that a board this computer does not share a log with can show and explain its half
 * of each run (the board keeps them apart from its decisions). At least once, in seq order, in bounded
 * batches (REPORT_LIMITS); the board keeps each (computer, seq) once, so a resend costs nothing.
 *
 * The log is the only buffer: a batch is read from it at the cursor, and the cursor, a checkpoint of
 * this log (`report:<computer>`), moves once the board said it has the batch. The log's feed only says
 * that something was committed. So nothing is held in memory however long the board is away, a stop
 * reads to the log's head (the drain's last commits included) whatever the feed had handed over, and a
 * restart of either side sends again from the cursor. A checkpoint, not an outbox: the copy decides
 * nothing, and an event a batch would grow the log with traffic rather than decisions.
 */
export class BoardReport {
  private readonly name: string;
  /** Through which seq of the log the board has what it keeps of it (what it does not keep included). */
  private cursor = 0;
  private subscription: Subscription | null = null;
  /** The one pass over the log at a time (see `pump`). */
  private pumping: Promise<void> | null = null;
  /** Something was committed since the pass under way last read the log: it reads once more. */
  private again = false;
  private cancelGather: (() => void) | null = null;
  private stopping = false;
  private stopped = false;
  /** Set when the board keeps no copy (501, or older than the call): nothing more is sent this life. */
  private refused = false;
  /** Set when the board refused this computer's token: every call would be refused the same way, so none goes this life. */
  private tokenRefused = false;
  private attempt = 0;
  /** Fewer events a batch after the board refused one as too large or malformed (see `sendNext`). */
  private batchLimit: number = REPORT_LIMITS.batchEvents;
  /** Ends the retry wait under way at once. */
  private wake: (() => void) | null = null;

  constructor(private readonly options: BoardReportOptions) {
    this.name = `report:${options.computer}`;
  }

  async start(): Promise<void> {
    const { store } = this.options;
    const saved = await store.checkpoints.load(this.name);
    this.cursor = saved?.seq ?? 0;
    // The feed only nudges (what is sent is read at the cursor): from the head, so the backlog is not read twice.
    this.subscription = store.subscribe(await store.headSeq()).subscribe({
      next: () => this.nudge(),
      error: (error: unknown) => this.options.log(`computer ${this.options.computer}: its report to the board stopped (${messageOf(error)})`),
    });
    // What the last life left unsent (a SIGKILL, a board that was away) goes now.
    this.nudge();
  }

  /** The board is reachable again (the push stream connected): a retry waiting goes at once. */
  boardIsBack(): void {
    this.attempt = 0;
    this.wake?.();
  }

  /**
   * Sends what the log holds past the cursor, bounded by `withinMs`, then stops: a drained computer
   * leaves the board its whole half. A board that does not take it in time gets it from the next start.
   */
  async stop(withinMs = 5_000): Promise<void> {
    this.subscription?.unsubscribe();
    this.cancelGather?.();
    this.cancelGather = null;
    if (withinMs > 0 && !this.refused && !this.tokenRefused) {
      // A stop reads the log once what was appended has committed (the store's group commit).
      await this.options.store.settle().catch(() => undefined);
      this.stopping = true;
      this.again = true;
      this.wake?.();
      let cancel: () => void = () => undefined;
      const bound = new Promise<void>((resolve) => {
        cancel = this.options.clock.after(withinMs, resolve);
      });
      await Promise.race([this.pump(), bound]);
      cancel();
    }
    this.stopped = true;
    this.wake?.();
    if (this.pumping) {
      // A call still in flight at the bound is given up (the board keeps a batch once, sent again or not).
      this.options.abandon?.();
      await this.pumping;
    }
    if (withinMs > 0 && !this.refused) {
      const unsent = await this.countUnsent().catch(() => 0);
      if (unsent > 0)
        this.options.log(
          `computer ${this.options.computer}: ${unsent} event(s) of its runs did not reach the board before it stopped; its next start sends them`,
        );
    }
  }

  /** A commit: a pass over the log soon (its burst gathers first), or once more by the pass under way. */
  private nudge(): void {
    if (this.stopped || this.refused || this.tokenRefused) return;
    this.again = true;
    // Armed even while a pass runs: a pass that had just ended when this came is followed by another.
    if (this.cancelGather === null)
      this.cancelGather = this.options.clock.after(GATHER_MS, () => {
        this.cancelGather = null;
        void this.pump();
      });
  }

  /** One pass at a time, sending from the cursor until the log's head; a commit during it makes it read again. */
  private pump(): Promise<void> {
    // Not an async function's own bookkeeping: a pass with nothing to do would end before it was
    // assigned, and leave a settled promise here for every later caller to take as the pass under way.
    this.pumping ??= this.pass().finally(() => {
      this.pumping = null;
    });
    return this.pumping;
  }

  private async pass(): Promise<void> {
    while (!this.stopped && !this.refused && !this.tokenRefused) {
      this.again = false;
      let step: Step;
      try {
        step = await this.sendNext();
      } catch (error) {
        // The log could not be read, or the cursor not saved: tried again after a wait, as a board that is away.
        if (this.attempt === 0)
          this.options.log(`computer ${this.options.computer}: its report to the board failed (${messageOf(error)}): it tries again`);
        step = 'again later';
      }
      if (step === 'again later') await this.backOff();
      else if (step === 'caught up' && !this.again) return;
    }
  }

  /** The next batch at the cursor, sent; or nothing to send. */
  private async sendNext(): Promise<Step> {
    const page = await this.options.store.readAll(this.cursor, this.batchLimit);
    if (page.length === 0) return 'caught up';
    const { rows, through } = this.batchOf(page);
    if (rows.length === 0) {
      await this.moveTo(through);
      return 'sent';
    }
    const answer = await this.options.send(rows);
    if (this.stopped && answer.status !== 200) return 'caught up';
    if (answer.status === 200) {
      this.attempt = 0;
      this.batchLimit = REPORT_LIMITS.batchEvents;
      await this.moveTo(through);
      return 'sent';
    }
    if (answer.status === 501 || answer.status === 404) {
      // A board that keeps no copy (or older than the call): said once, and nothing more sent this life.
      this.refused = true;
      this.options.log(
        `computer ${this.options.computer}: the board keeps no copy of its computers' events (${answer.status}${detailOf(answer)}); its pages show this computer's runs from the board's half only`,
      );
      return 'caught up';
    }
    if (answer.status === 401 || answer.status === 403) {
      // Its token: every call would be refused alike (the push stream stops the daemon for it), so none goes again this life.
      this.tokenRefused = true;
      this.options.log(
        `computer ${this.options.computer}: the board refused its report (${answer.status}${detailOf(answer)}): nothing more is sent with this token`,
      );
      return 'caught up';
    }
    if (answer.status === 400 || answer.status === 413 || answer.status === 422) {
      // The same batch would be refused for ever and hold the cursor on it: smaller, down to the one event, which is then passed over.
      if (rows.length > 1) {
        this.batchLimit = Math.max(1, Math.floor(rows.length / 2));
        return 'sent';
      }
      this.options.log(
        `computer ${this.options.computer}: the board refused event ${rows[0]!.seq} (${rows[0]!.type}) of its report (${answer.status}${detailOf(answer)}); its own log keeps it`,
      );
      await this.moveTo(rows[0]!.seq);
      return 'sent';
    }
    // Down, busy or refusing for now: the same batch again, later.
    if (this.attempt === 0)
      this.options.log(
        `computer ${this.options.computer}: the board did not take its report (${answer.status || 'no answer'}${detailOf(answer)}): it is sent again`,
      );
    return 'again later';
  }

  /** Of a page of the log, the rows to send (this computer's reported streams, within the byte bound) and the seq the batch covers. */
  private batchOf(page: readonly DomainEvent[]): { rows: ReportedRow[]; through: number } {
    const rows: ReportedRow[] = [];
    let bytes = 0;
    let through = this.cursor;
    for (const event of page) {
      const row = this.rowOf(event);
      if (row !== null) {
        const size = JSON.stringify(row).length;
        if (size > REPORT_LIMITS.eventBytes) {
          this.options.log(
            `computer ${this.options.computer}: event ${event.seq} (${event.type}) is too large to copy to the board; its own log keeps it`,
          );
        } else {
          if (rows.length > 0 && bytes + size > REPORT_LIMITS.sendBytes) break;
          rows.push(row);
          bytes += size;
        }
      }
      through = event.seq;
    }
    return { rows, through };
  }

  private rowOf(event: DomainEvent): ReportedRow | null {
    const { owner, kind } = parseStream(event.stream);
    if (owner !== this.options.computer || !REPORTED_KINDS.has(kind)) return null;
    return {
      seq: event.seq,
      stream: event.stream,
      version: event.version,
      type: event.type,
      data: event.data,
      at: event.at,
      cause: event.cause,
      actor: event.actor,
    };
  }

  private async moveTo(seq: number): Promise<void> {
    this.cursor = Math.max(this.cursor, seq);
    // Not saved (a write that failed): the next start sends these again, and the board keeps them once.
    await this.options.store.checkpoints.save({ name: this.name, seq: this.cursor, state: '{}' }).catch((error: unknown) => {
      this.options.log(`computer ${this.options.computer}: its report cursor was not saved (${messageOf(error)})`);
    });
  }

  /** Waits before a failed call goes again: full-jitter backoff, short while stopping; cut short by `wake`. */
  private backOff(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    const random = this.options.random ?? Math.random;
    const waitMs = this.stopping ? STOPPING_RETRY_MS : fullJitterMs(this.attempt++, random(), 500, 30_000);
    return new Promise<void>((resolve) => {
      const done = () => {
        this.wake = null;
        cancel();
        resolve();
      };
      const cancel = this.options.clock.after(waitMs, done);
      this.wake = done;
    });
  }

  /** How many of this computer's reported events the log holds past the cursor (at most COUNT_PAGES pages read). */
  private async countUnsent(): Promise<number> {
    let count = 0;
    let after = this.cursor;
    for (let i = 0; i < COUNT_PAGES; i++) {
      const page = await this.options.store.readAll(after, REPORT_LIMITS.batchEvents);
      for (const event of page) if (this.rowOf(event) !== null) count++;
      if (page.length < REPORT_LIMITS.batchEvents) break;
      after = page.at(-1)!.seq;
    }
    return count;
  }
}

/** The board's reason, when its answer gives one. */
function detailOf(answer: BoardAnswer): string {
  const detail = (answer.body as { detail?: { error?: unknown } } | undefined)?.detail;
  return typeof detail?.error === 'string' ? `: ${detail.error}` : '';
}
