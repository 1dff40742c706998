import Database from 'better-sqlite3';
import { describe, expect, it, vi } from 'vitest';
import type { DomainEvent } from '../../events/catalog.ts';
import { FakeClock } from '../../runtime/actors/clock.ts';
import type { EffectConsumer } from '../../runtime/actors/effectConsumer.ts';
import { Outbox } from '../../runtime/actors/outbox.ts';
import { appendOrThrow } from '../../runtime/store/eventStore.ts';
import { counterEventOf } from '../fixtures/counter/counterEvents.ts';
import { openCounterStore } from '../fixtures/counter/counterStore.ts';
import { bumped, milestone } from '../support/events.ts';
import { tempDbPath } from '../support/tempStore.ts';

/** A log whose next `n` commits fail as on a full disk (the store's own fault seam), or all while `full`. */
async function faultyLog() {
  let failures = 0;
  let full = false;
  const store = await openCounterStore(tempDbPath(), {
    faults: {
      failWrites: () => {
        if (!full && failures === 0) return null;
        if (!full) failures--;
        return new Database.SqliteError('database or disk is full', 'SQLITE_FULL');
      },
    },
  });
  return { store, failNext: (n: number) => (failures = n), fill: () => (full = true), free: () => (full = false) };
}

function announcer(onPerform: (event: DomainEvent) => void = () => undefined) {
  const performed = new Map<number, number>();
  const consumer: EffectConsumer<{ total: number }> = {
    name: 'announce',
    delivery: 'at-most-once',
    effectOf: (event) => {
      const counter = counterEventOf(event);
      return counter?.type === 'counter.milestone.reached' ? { total: counter.data.total } : null;
    },
    async perform(_effect, event) {
      performed.set(event.seq, (performed.get(event.seq) ?? 0) + 1);
      onPerform(event);
      return { ok: true };
    },
  };
  return { consumer, performed };
}

async function milestones(store: Awaited<ReturnType<typeof faultyLog>>['store'], count: number): Promise<number[]> {
  const seqs: number[] = [];
  for (let i = 0; i < count; i++) {
    const events = await appendOrThrow(store, { expected: { 'counter:a': 'any' }, events: [bumped('counter:a', i), milestone('counter:a', i)] });
    seqs.push(events[1]!.seq);
  }
  return seqs;
}

/** Until `count` retries wait on the clock, beside the outbox's own timer (its mark, every minute). */
async function retriesWaiting(clock: FakeClock, retries: number): Promise<void> {
  const count = retries + 1;
  for (let turn = 0; turn < 2_000 && clock.pendingTimers() < count; turn++) await new Promise((resolve) => setTimeout(resolve, 1));
  expect(clock.pendingTimers()).toBe(count);
}

describe('an outbox whose log cannot be written', () => {
  it('records an effect it performed once the log takes writes again, and performs it only once', async () => {
    const log = await faultyLog();
    const effects = await milestones(log.store, 3);
    const clock = new FakeClock();
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
    // The disk fills while the first effect is performed: its take is in, its record is not.
    const { consumer, performed } = announcer((event) => event.seq === effects[0] && log.fill());
    const outbox = new Outbox(store(log), consumer, clock);
    await outbox.open();

    const drained = outbox.drain();
    await retriesWaiting(clock, 1);
    log.free();
    clock.advance(100);
    await drained;

    expect([...performed.entries()]).toEqual(effects.map((seq) => [seq, 1]));
    const records = (await log.store.readStream('outbox:announce')).filter((e) => e.type === 'outbox.performed');
    expect(records.map((e) => e.type === 'outbox.performed' && e.data.effect)).toEqual(effects);
  });

  it('takes effects whose take the log refused once it has room, following the log: none skipped, none twice', async () => {
    const log = await faultyLog();
    const clock = new FakeClock();
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const { consumer, performed } = announcer();
    const written = await milestones(log.store, 2);
    const outbox = new Outbox(store(log), consumer, clock);
    await outbox.open();

    // The follower hands the outbox both effects; its take of them is the next commit, and fails.
    log.failNext(1);
    const following = outbox.follow();
    await retriesWaiting(clock, 1);
    clock.advance(100);
    await outbox.drain();
    following.unsubscribe();

    expect([...performed.entries()]).toEqual(written.map((seq) => [seq, 1]));
    const takes = (await log.store.readStream('outbox:announce')).filter((e) => e.type === 'outbox.taken');
    expect(takes.flatMap((e) => (e.type === 'outbox.taken' ? e.data.effects : []))).toEqual(written);
  });
});

const store = (log: Awaited<ReturnType<typeof faultyLog>>) => log.store;
