import type { Subscription } from 'rxjs';
import type { DomainEvent } from '../../events/catalog.ts';
import { parseStream } from '../../events/envelope.ts';
import { REPORT_LIMITS, type ReportedRow } from '../../events/store/computerEvents.ts';
import type { EventStore } from '../../events/store/eventStore.ts';
import { messageOf } from '../../events/thrown.ts';
import type { BoardAnswer } from '../../wire/boardClient.ts';
import { fullJitterMs } from '../runtime/backoff.ts';
import type { Clock } from '../runtime/clock.ts';
import type { FailureLog } from '../runtime/untilRecorded.ts';

/** The kinds of a computer's streams the board keeps a copy of: its runs', its lanes' (their queues), its sessions' and its own (slots). */
const REPORTED_KINDS = new Set(['run', 'lane', 'session', 'computer']);
/** How long events gather before a batch goes (a turn's burst of decisions goes as one call). */
const GATHER_MS = 100;

export interface BoardReportOptions {
  readonly store: Pick<EventStore, 'subscribe' | 'checkpoints' | 'readAll'>;
  readonly computer: string;
  readonly send: (events: readonly ReportedRow[]) => Promise<BoardAnswer>;
  readonly clock: Clock;
  readonly log: FailureLog;
}

/**
 * Sends the board a copy of this computer's own events (its runs', lanes', sessions' and its own) after
 * their commit, so that a board this computer does not share a log with can show and explain its half
 * of each run (the board keeps them apart from its decisions). At least once, in seq order, in bounded
 * batches (REPORT_LIMITS); the board keeps each (computer, seq) once, so a resend costs nothing. The
 * cursor is a checkpoint of this log (`report:<computer>`), moved only once the board said it has
 * the batch: a restart of either side sends again from there. A checkpoint, not an outbox: the copy
 * decides nothing, and an event a batch would grow the log with traffic rather than decisions.
 */
export class BoardReport {
  private readonly name: string;
  private pending: ReportedRow[] = [];
  /** The last seq read from the log, reportable or not: where the cursor goes once what is pending is sent. */
  private seen = 0;
  private sending: Promise<void> | null = null;
  private cancelGather: (() => void) | null = null;
  private subscription: Subscription | null = null;
  private stopped = false;
  private stopping = false;
  private attempt = 0;
  /** Set when the board keeps no copy (501): nothing more is sent this life. */
  private refused = false;
  private wake: (() => void) | null = null;

  constructor(private readonly options: BoardReportOptions) {
    this.name = `report:${options.computer}`;
  }

  async start(): Promise<void> {
    const saved = await this.options.store.checkpoints.load(this.name);
    this.seen = saved?.seq ?? 0;
    this.subscription = this.options.store.subscribe(this.seen).subscribe({
      next: (event) => this.take(event),
      error: (error: unknown) => this.options.log(`computer ${this.options.computer}: its report to the board stopped (${messageOf(error)})`),
    });
  }

  /** Sends what is pending (bounded by `withinMs`), then stops: a drained computer leaves the board its whole half. */
  async stop(withinMs = 5_000): Promise<void> {
    this.subscription?.unsubscribe();
    this.cancelGather?.();
    // What the log holds past what the feed handed over (the drain's last commits, a feed behind): read
    // here, or it would reach the board only at the next start.
    if (withinMs > 0 && !this.refused) {
      for (;;) {
        const page = await this.options.store.readAll(this.seen, 500).catch(() => []);
        for (const event of page) this.take(event);
        if (page.length < 500) break;
      }
      this.cancelGather?.();
      this.cancelGather = null;
      // A retry's wait is cut short: the stop's bound is what limits it now.
      this.stopping = true;
      this.wake?.();
    }
    if (!this.refused && this.pending.length > 0) {
      let cancel = () => {
        // set below
      };
      await Promise.race([this.pump(), new Promise<void>((resolve) => (cancel = this.options.clock.after(withinMs, resolve)))]);
      cancel();
    }
    this.stopped = true;
    this.wake?.();
    await this.sending?.catch(() => undefined);
    if (this.pending.length > 0)
      this.options.log(
        `computer ${this.options.computer}: ${this.pending.length} event(s) of its runs did not reach the board before it stopped; its next start sends them`,
      );
  }

  private take(event: DomainEvent): void {
    this.seen = event.seq;
    const { owner, kind } = parseStream(event.stream);
    if (owner !== this.options.computer || !REPORTED_KINDS.has(kind)) return;
    const row: ReportedRow = {
      seq: event.seq,
      stream: event.stream,
      version: event.version,
      type: event.type,
      data: event.data,
      at: event.at,
      cause: event.cause,
      actor: event.actor,
    };
    if (JSON.stringify(row).length > REPORT_LIMITS.eventBytes) {
      this.options.log(
        `computer ${this.options.computer}: event ${event.seq} (${event.type}) is too large to copy to the board; its own log keeps it`,
      );
      return;
    }
    this.pending.push(row);
    if (this.cancelGather === null && !this.refused) this.cancelGather = this.options.clock.after(GATHER_MS, () => void this.pump());
  }

  /** Sends what is pending, a batch at a time, one call at a time. */
  private pump(): Promise<void> {
    this.cancelGather = null;
    if (this.sending) return this.sending;
    this.sending = (async () => {
      try {
        while (this.pending.length > 0 && !this.stopped && !this.refused) await this.sendOne();
      } finally {
        this.sending = null;
      }
    })();
    return this.sending;
  }

  private async sendOne(): Promise<void> {
    const batch = cut(this.pending);
    const answer = await this.options.send(batch);
    if (answer.status === 200) {
      this.attempt = 0;
      this.pending = this.pending.slice(batch.length);
      const through = this.pending.length === 0 ? this.seen : batch.at(-1)!.seq;
      await this.options.store.checkpoints.save({ name: this.name, seq: through, state: '{}' }).catch((error: unknown) => {
        // Not saved: the next start sends these again, and the board keeps them once.
        this.options.log(`computer ${this.options.computer}: its report cursor was not saved (${messageOf(error)})`);
      });
      return;
    }
    if (answer.status === 501 || answer.status === 404) {
      // A board that keeps no copy (on PostgreSQL, or older than the call): said once, and nothing more sent.
      this.refused = true;
      this.pending = [];
      this.options.log(
        `computer ${this.options.computer}: the board keeps no copy of its computers' events (${answer.status}); its pages show this computer's runs from the board's half only`,
      );
      return;
    }
    // Down, busy or refusing for now: the same batch again, later (soon while stopping).
    if (this.attempt === 0)
      this.options.log(`computer ${this.options.computer}: the board did not take its report (${answer.status || 'no answer'}): it is sent again`);
    const waitMs = this.stopping ? 100 : fullJitterMs(this.attempt++, Math.random(), 500, 30_000);
    await new Promise<void>((resolve) => {
      const cancel = this.options.clock.after(waitMs, () => {
        this.wake = null;
        resolve();
      });
      this.wake = () => {
        cancel();
        resolve();
      };
    });
  }
}

/** The next batch: at most REPORT_LIMITS.batchEvents events and about `sendBytes` of JSON, always at least one. */
function cut(pending: readonly ReportedRow[]): ReportedRow[] {
  const batch: ReportedRow[] = [];
  let bytes = 0;
  for (const row of pending) {
    const size = JSON.stringify(row).length;
    if (batch.length > 0 && (batch.length >= REPORT_LIMITS.batchEvents || bytes + size > REPORT_LIMITS.sendBytes)) break;
    batch.push(row);
    bytes += size;
  }
  return batch;
}
