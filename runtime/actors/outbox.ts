import type { Subscription } from 'rxjs';
import {
  emptyLedger,
  evolveLedger,
  isOwn,
  type Ledger,
  type LedgerEvent,
  markDue,
  mayStartUnder,
  type PendingEffect,
  recordUnder,
  settlementOf,
  takerOf,
} from '../../actors/outboxLedger.ts';
import { foldMark, type OutboxMark, readMark, settles } from '../../actors/outboxMark.ts';
import { writerOf } from '../../actors/writer.ts';
import type { DomainEvent } from '../../events/catalog.ts';
import { messageOf } from '../../events/thrown.ts';
import type { AppendLease, AppendResult, EventStore } from '../store/eventStore.ts';
import { LeaseLostError } from '../store/leaseLost.ts';
import type { Clock } from './clock.ts';
import type { EffectConsumer, EffectRecord, Outcome } from './effectConsumer.ts';
import { OutboxFeed } from './outboxFeed.ts';
import { OutboxMarks } from './outboxMarks.ts';
import { writerIsGone } from './processes.ts';
import { UnderWay } from './underWay.ts';
import { recordWaitMs, untilRecorded } from './untilRecorded.ts';

const PAGE = 500;

/**
 * Takes effects from the log past this consumer's cursor and performs them after their commit.
 * Taking is an append to `outbox:<consumer>` that moves the cursor, at the stream version this
 * process last saw: of two processes (or a retried transaction) only one take commits, so no effect
 * is ever taken twice.
 */
export class Outbox<E> {
  private readonly stream: string;
  private readonly marks: OutboxMarks;
  /** What this process knows of its effects (outboxLedger.ts): every change to it goes through `evolve`. */
  private ledger: Ledger = emptyLedger;
  private running: Promise<void> | null = null;
  /** Effects being performed (each settles once its record is appended). */
  private readonly underWay = new UnderWay();
  /** Records appended and not yet answered: a take's expected version counts them. */
  private recordsInFlight = 0;
  /** Events handed over by `follow`: read from here rather than the log. */
  private readonly feed = new OutboxFeed();
  private rerun = false;
  private stopped = false;
  /** With a lease (EpochTakes): the effects this process took and has not settled, each with the lease it took them under. */
  private readonly takenUnder = new Map<number, AppendLease>();

  constructor(
    private readonly store: EventStore,
    private readonly consumer: EffectConsumer<E>,
    /** Stamps what the outbox writes, and times its waits (a take or a record the log could not take, a mark by time, `settle`). */
    private readonly clock: Clock,
  ) {
    this.stream = `outbox:${consumer.name}`;
    this.marks = new OutboxMarks(
      store,
      this.stream,
      clock,
      consumer.implicit !== undefined,
      () => this.ledger,
      (mark) => this.evolve({ kind: 'marked', mark }),
    );
  }

  private evolve(event: LedgerEvent): void {
    this.ledger = evolveLedger(this.ledger, event);
    if (event.kind !== 'marked') this.marks.whenDue();
  }

  /**
   * Loads the cursor, and settles effects that a dead process took but never finished. `startAt`
   * sets where a consumer that never ran begins (the present, for hooks: history is not replayed).
   * `lifeFrom` (implicit takes only): the log's head before this process wrote anything, so its own
   * effects are told from a dead life's of the same `host:pid`; the head at opening when not given.
   */
  async open(startAt?: number, lifeFrom?: number): Promise<void> {
    this.marks.byTime();
    const saved = await this.store.checkpoints.load(this.stream);
    const from = readMark(saved?.state);
    const mark = foldMark(from, await this.store.readStream(this.stream, from.version));
    if (this.consumer.implicit) return this.openImplicit(mark, lifeFrom ?? (await this.store.headSeq()));
    this.evolve({ kind: 'opened', mark: structuredClone(mark) });
    const pending = new Map<number, DomainEvent>();
    for (const [effect, takeSeq] of Object.entries(mark.pending)) {
      const take = await this.readAt(takeSeq);
      if (take) pending.set(Number(effect), take);
    }
    if (this.ledger.version === 0 && startAt !== undefined && startAt > 0) {
      const result = await this.write(() =>
        this.store.append({
          expected: { [this.stream]: 0 },
          events: [{ stream: this.stream, type: 'outbox.taken', data: { through: startAt, effects: [] }, at: this.clock.now() }],
        }),
      );
      if (!result.ok) return this.open(startAt);
      this.evolve({ kind: 'took', event: result.events[0]! as DomainEvent });
    }
    if (!(await this.settleLeftovers(pending))) return this.open(startAt);
  }

  /**
   * Opens an outbox whose takes are the decisions themselves: reads the log from the mark's cursor up to
   * this life (`lifeFrom`: every event after it is this process's or later) for effects no input settled,
   * and settles those of a dead taker. Every effect of this life is then read by the drains, from `lifeFrom` on.
   */
  private async openImplicit(mark: OutboxMark, lifeFrom: number): Promise<void> {
    const implicit = this.consumer.implicit!;
    const pending = new Map<number, PendingEffect>();
    for (const [effect, take] of Object.entries(mark.pending)) {
      const event = await this.readAt(Number(effect));
      pending.set(Number(effect), { key: event ? implicit.key(event) : null, take });
    }
    let cursor = Math.max(this.ledger.cursor, mark.cursor);
    this.evolve({ kind: 'opened', mark: structuredClone(mark), pending, lifeFrom });
    while (cursor < lifeFrom) {
      const page = await this.store.readAll(cursor, PAGE);
      if (page.length === 0) break;
      for (const event of page) {
        if (event.seq > lifeFrom) break;
        this.decided(event);
      }
      cursor = page[page.length - 1]!.seq;
    }
    this.evolve({ kind: 'past', through: lifeFrom });
    const leftovers = new Map<number, DomainEvent>();
    for (const [effect, { take }] of this.ledger.pending) {
      const taken = await this.readAt(take);
      if (taken) leftovers.set(effect, taken);
    }
    if (!(await this.settleLeftovers(leftovers))) return this.open(undefined, lifeFrom);
    // Where this life began is where the next start reads from, however this one ends (a SIGKILL saves nothing).
    if (markDue(this.ledger, true)) await this.marks.save();
  }

  /** With implicit takes: an event of the log read at the cursor, which may call for an effect or settle some. */
  private decided(event: DomainEvent): void {
    if (event.stream === this.stream) {
      if (settles(event)) this.evolve({ kind: 'settled', effect: event.data.effect });
      return;
    }
    const implicit = this.consumer.implicit!;
    const effect = this.consumer.effectOf(event) === null ? undefined : implicit.key(event);
    this.evolve({ kind: 'decided', seq: event.seq, settles: implicit.settles(event), ...(effect === undefined ? {} : { effect }) });
  }

  /**
   * Settles the effects whose taker died before their end was recorded (`pending`: each with its take):
   * an at-least-once one is performed again, an at-most-once one recorded as interrupted. False when
   * another process recorded first: the outbox then opens again.
   */
  private async settleLeftovers(pending: ReadonlyMap<number, DomainEvent>): Promise<boolean> {
    for (const [effect, taken] of pending) {
      if (!this.takerIsGone(effect, taken)) continue;
      // A row this version cannot read is skipped: what the read finds then is a later event, not this effect.
      const event = await this.readAt(effect);
      const settlement = settlementOf(this.consumer.delivery, event !== undefined);
      // One this version cannot read (a newer runledger took it, and the store has named the row) stays
      // taken and unsettled: it is not lost, and a version that can read it performs it when it opens.
      if (settlement === 'keep') continue;
      if (settlement === 'perform') {
        await this.perform(effect, event!);
        this.evolve({ kind: 'settled', effect });
        continue;
      }
      const record = this.consumer.interrupted?.(effect, event, taken) ?? {
        type: 'outbox.interrupted',
        data: { effect, detail: `taken by ${taken.actor}, which stopped before it finished` },
      };
      // At the version read: of two processes opening at once, only one records it; the other reads again.
      const result = await this.write(() =>
        this.store.append({ expected: { [this.stream]: this.ledger.version }, events: [{ stream: this.stream, ...record, at: this.clock.now() }] }),
      );
      if (!result.ok) return false;
      this.evolve({ kind: 'recorded', event: result.events[0]! as DomainEvent });
    }
    return true;
  }

  /** The event at `seq`, or undefined when this version cannot read its row. */
  private async readAt(seq: number): Promise<DomainEvent | undefined> {
    const [read] = await this.store.readAll(seq - 1, 1);
    return read?.seq === seq ? read : undefined;
  }

  /**
   * Takes nothing more. A drain in flight finishes the effect it is performing, and whatever then
   * fails because its process is closing the log (a store closed under it) ends it quietly: the
   * effect was taken, so the next start settles it as its delivery says.
   */
  stop(): void {
    this.stopped = true;
    this.marks.stop();
  }

  /**
   * Takes and performs everything past the cursor, and waits for what is under way; returns how many
   * effects were performed meanwhile. Effects in the background are started, not waited for: it
   * returns how many it started.
   */
  async drain(): Promise<number> {
    if (this.stopped) return 0;
    const before = this.underWay.counts;
    await this.takeAll();
    if (this.consumer.background) return this.underWay.counts.started - before.started;
    await this.underWay.all();
    return this.underWay.counts.performed - before.performed;
  }

  /** Resolves true once every effect started so far has ended and its record is appended, false if `ms` passed first. */
  async settle(ms = 30_000): Promise<boolean> {
    // Timed by the outbox's clock, as its other waits: the process's time line, or a simulator's.
    let late = false;
    let wake: () => void = () => undefined;
    const timeout = new Promise<void>((resolve) => (wake = resolve));
    const cancel = this.clock.after(ms, () => {
      late = true;
      wake();
    });
    try {
      while (this.underWay.size > 0 || this.running) {
        if (late) return false;
        await Promise.race([Promise.all([...this.underWay.now(), this.running]), timeout]);
      }
      return true;
    } finally {
      cancel();
    }
  }

  /** Takes every effect past the cursor and starts them, as many at once as the consumer allows. */
  private takeAll(): Promise<void> {
    if (this.running) {
      this.rerun = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.rerun = false;
          while (!this.stopped) {
            const page = await this.nextPage();
            if (page.length === 0) break;
            const through = page[page.length - 1]!.seq;
            if (this.consumer.implicit) {
              await this.startOwn(page, through);
              continue;
            }
            const effects = await this.worthTaking(page);
            if (effects.length === 0) {
              // Nothing to take: the cursor moves in memory only. Writing a take here would append an
              // event past the cursor for every page read, and the outbox would chase its own tail.
              this.evolve({ kind: 'past', through });
              continue;
            }
            if (!(await this.take(effects, through))) {
              // Another process moved the cursor first: it owns those effects. Start again from its cursor,
              // the page handed back to the feed (what the other process took is dropped from it as stale).
              this.feed.handBack(page);
              await this.reload();
              continue;
            }
            for (const event of effects) {
              await this.underWay.room(this.consumer.concurrency ?? 1);
              this.start(event);
            }
          }
        } while (this.rerun && !this.stopped);
      } catch (error) {
        if (!this.stopped) throw error;
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }

  /**
   * Takes `effects` and moves the cursor `through` in one append; false when another process took first.
   * Records this process has appended and not yet heard back about commit before this take (the store
   * keeps the order of appends), so they are counted in the version it expects. A take the log could
   * not write took nothing: the same page is taken again once it can.
   */
  private async take(effects: readonly DomainEvent[], through: number): Promise<boolean> {
    const lease = this.consumer.lease?.() ?? null;
    // This process's own from before its take commits: an opening meanwhile (the chores taken up again
    // at the same epoch) must not find the take committed and not yet its own, and settle it (EpochTakes).
    if (lease) for (const event of effects) this.takenUnder.set(event.seq, lease);
    const untake = () => {
      for (const event of effects) this.takenUnder.delete(event.seq);
    };
    const taken = await this.write(async () => {
      const result = await this.store.append({
        expected: { [this.stream]: this.ledger.version + this.recordsInFlight },
        events: [
          {
            stream: this.stream,
            type: 'outbox.taken',
            data: { through, effects: effects.map((e) => e.seq), ...(lease && lease.epoch > 0 ? { epoch: lease.epoch } : {}) },
            at: this.clock.now(),
          },
        ],
        // Checked in the take's transaction: an epoch that is no longer the lease's takes nothing.
        ...(lease ? { lease } : {}),
      });
      // Known as soon as it commits: a record answered right after it must find it counted.
      if (result.ok) this.evolve({ kind: 'took', event: result.events[0]! as DomainEvent });
      return result;
    }).catch((error: unknown) => {
      untake();
      throw error;
    });
    if (!taken.ok) untake();
    return taken.ok;
  }

  /**
   * With implicit takes: a page's effects are taken already (by their commit); those of this life are
   * started, any other writer's left pending for its taker, and what the page settles is settled.
   */
  private async startOwn(page: readonly DomainEvent[], through: number): Promise<void> {
    const own: DomainEvent[] = [];
    for (const event of page) {
      this.decided(event);
      if (this.consumer.effectOf(event) !== null && isOwn(this.ledger, event, this.store.writer)) own.push(event);
    }
    this.evolve({ kind: 'past', through });
    for (const event of own) {
      await this.underWay.room(this.consumer.concurrency ?? 1);
      this.start(event);
    }
  }

  /** The events of a page that call for an effect, and one that is needed. */
  private async worthTaking(page: readonly DomainEvent[]): Promise<DomainEvent[]> {
    const effects: DomainEvent[] = [];
    for (const event of page) {
      const effect = this.consumer.effectOf(event);
      if (effect !== null && (!this.consumer.needed || (await this.consumer.needed(effect, event)))) effects.push(event);
    }
    return effects;
  }

  private start(event: DomainEvent): void {
    const background = this.consumer.background;
    this.underWay.add(this.perform(event.seq, event), (error: unknown) => {
      // The log failed under it: what a stopping process expects, and the next start settles the
      // effect as its delivery says; otherwise the drain that waits on it reports it, or, in the
      // background, where nobody waits, the consumer's log.
      if (this.stopped) return;
      if (!background) throw error;
      background.log(`outbox ${this.consumer.name}: the end of the effect of seq ${event.seq} could not be recorded: ${messageOf(error)}`);
    });
  }

  /** Drains whenever the log grows, until unsubscribed. */
  follow(): Subscription {
    this.feed.follow();
    return this.store.subscribe(this.ledger.cursor).subscribe({
      next: (event) => {
        if (event.seq <= this.ledger.cursor) return;
        // Most events call for nothing here: with nothing queued before one and no drain under way, the
        // cursor steps past it in memory, as a drain would, without a drain (every follower sees every
        // event, so this is the hot path of all of them).
        // The feed hands over every readable event past the cursor in order (a row the store skips
        // leaves a gap in seqs, not in the feed), so with nothing queued this one is the next.
        if (!this.running && this.feed.isEmpty && this.consumer.effectOf(event) === null) {
          if (this.consumer.implicit) this.decided(event);
          this.evolve({ kind: 'past', through: event.seq });
          return;
        }
        this.feed.push(event);
        if (this.consumer.implicit) {
          // The feed hands a commit over before the deciding actor hears back from its append: its effects
          // start once the actor has acted on it (its drain, or this one after the commit's microtasks), so
          // a consumer reading what the actor knows (a run's phase) reads it as of the decision.
          this.drainSoon();
          return;
        }
        // In the background nobody waits for a drain either: what fails it is told.
        const background = this.consumer.background;
        if (background) this.drain().catch((error: unknown) => background.log(`outbox ${this.consumer.name}: ${messageOf(error)}`));
        else void this.drain();
      },
      // A feed that failed hands over nothing more: drains read the log again.
      error: () => this.feed.failed(),
    });
  }

  private drainScheduled = false;

  private drainSoon(): void {
    if (this.drainScheduled) return;
    this.drainScheduled = true;
    setImmediate(() => {
      this.drainScheduled = false;
      void this.drain();
    });
  }

  /** The events past the cursor: those `follow` handed over when they join up with it, else the log's. */
  private async nextPage(): Promise<DomainEvent[]> {
    const cursor = this.ledger.cursor;
    return this.feed.next(cursor, PAGE) ?? this.store.readAll(cursor, PAGE);
  }

  private async perform(effect: number, event: DomainEvent): Promise<void> {
    const wanted = this.consumer.effectOf(event);
    let outcome: Outcome;
    try {
      outcome = wanted === null ? { ok: true, detail: 'nothing to do' } : await this.consumer.perform(wanted, event, () => this.mayStart(effect));
    } catch (error) {
      outcome = { ok: false, detail: messageOf(error) };
    }
    if ('answered' in outcome) {
      // The input the effect recorded settles it; an explicit take needs its record still.
      if (this.consumer.implicit) return;
      outcome = { ok: true, detail: outcome.answered };
    }
    const record: EffectRecord =
      'record' in outcome
        ? outcome.record
        : { type: 'outbox.performed', data: { effect, ok: outcome.ok, ...(outcome.detail ? { detail: outcome.detail } : {}) } };
    const lease = this.takenUnder.get(effect);
    try {
      if (lease) await this.recordUnder(lease, record);
      else await this.record(record);
    } finally {
      this.takenUnder.delete(effect);
    }
  }

  /** Whether the effect `effect` may still be started by this process (EpochTakes): its take's epoch is the one it holds. */
  private mayStart(effect: number): boolean {
    return mayStartUnder(this.takenUnder.get(effect), this.consumer.lease?.());
  }

  /**
   * The record of an effect taken under `lease` (EpochTakes), appended under that lease: while this process
   * does not hold the lease (it lapsed: a pause, an outage), it waits, as the epoch may come back to it
   * (renewed with nobody taking it over) and the record commit then; once it holds another epoch, or stops,
   * the take's epoch is over and the record is given up (told to the background log): the holder of the
   * next epoch records the effect interrupted, and no effect is settled twice.
   */
  private async recordUnder(lease: AppendLease, record: EffectRecord): Promise<void> {
    for (let waits = 0; !this.stopped; waits++) {
      const next = recordUnder(lease, this.consumer.lease?.());
      if (next === 'give up') break;
      if (next === 'append') {
        try {
          return await this.record(record, lease);
        } catch (error) {
          if (!(error instanceof LeaseLostError)) throw error;
        }
      }
      await new Promise<void>((resolve) => this.clock.after(recordWaitMs(waits), resolve));
    }
    if (this.stopped) return;
    this.consumer.background?.log(
      `outbox ${this.consumer.name}: the end of the effect of seq ${record.data.effect} is not recorded: the chores' lease it was taken under (epoch ${lease.epoch}) is another's now, whose holder records it interrupted`,
    );
  }

  private async record(record: EffectRecord, lease?: AppendLease): Promise<void> {
    // The effect is done: its record waits for a log that can take it, and the effect is not done again.
    // A record waiting out an outage is not in flight: a take meanwhile does not count it.
    await this.write(async () => {
      this.recordsInFlight++;
      let result: AppendResult;
      try {
        result = await this.store.append({
          expected: { [this.stream]: 'any' },
          events: [{ stream: this.stream, ...record, at: this.clock.now() }],
          ...(lease ? { lease } : {}),
        });
      } finally {
        this.recordsInFlight--;
      }
      // Counted out and in within one step, so a take never sees it in neither.
      if (result.ok) this.evolve({ kind: 'recorded', event: result.events[0]! as DomainEvent });
      return result;
    });
  }

  /** An append to the outbox's stream, made again (its request built anew) while the log cannot take it. */
  private write(append: () => Promise<AppendResult>): Promise<AppendResult> {
    return untilRecorded(this.clock, append);
  }

  private async reload(): Promise<void> {
    for (const event of await this.store.readStream(this.stream, this.ledger.version)) this.evolve({ kind: 'read', event });
  }

  private takerIsGone(effect: number, taken: DomainEvent): boolean {
    const taker = takerOf(this.ledger, taken, {
      writer: this.store.writer,
      implicit: this.consumer.implicit !== undefined,
      held: this.consumer.lease?.(),
      performing: this.takenUnder.has(effect),
    });
    return taker === 'probe' ? writerIsGone(writerOf(taken.actor)) : taker === 'gone';
  }
}
