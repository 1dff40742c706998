/**
 * The outbox's ledger (actors/outboxLedger.ts) as a pure fold: given what an outbox read and wrote, when
 * one more thing happens, then what it knows and decides. No store, no clock: the runner's tests
 * (outbox.test.ts and its neighbours) check the same rules against a real log.
 */
import { describe, expect, it } from 'vitest';
import {
  emptyLedger,
  evolveLedger,
  isOwn,
  type Ledger,
  type LedgerEvent,
  MARK_EVERY,
  markDue,
  mayStartUnder,
  recordUnder,
  settlementOf,
  takerOf,
} from '../../../actors/outboxLedger.ts';
import type { DomainEvent } from '../../../events/catalog.ts';

const ME = 'host:100';
const OTHER = 'host:200';

/** An event as the log holds it; only what the ledger reads matters. */
function stored(type: string, data: object, at: { seq: number; version: number; actor?: string; stream?: string }): DomainEvent {
  return {
    stream: at.stream ?? 'outbox:announce',
    type,
    data,
    at: 1,
    cause: null,
    actor: at.actor ?? ME,
    seq: at.seq,
    version: at.version,
  } as DomainEvent;
}

const taken = (through: number, effects: number[], at: { seq: number; version: number; actor?: string }, epoch?: number) =>
  stored('outbox.taken', { through, effects, ...(epoch ? { epoch } : {}) }, at);
const performed = (effect: number, at: { seq: number; version: number; actor?: string }) => stored('outbox.performed', { effect, ok: true }, at);

function given(...events: LedgerEvent[]): Ledger {
  return events.reduce(evolveLedger, emptyLedger);
}

const opened = (version: number, cursor: number, lifeFrom?: number): LedgerEvent => ({
  kind: 'opened',
  mark: { version, cursor, pending: {} },
  ...(lifeFrom === undefined ? {} : { lifeFrom }),
});

describe('the ledger: the cursor and the version', () => {
  it('given an opened ledger, when this process takes through seq 10, then its cursor and version are the take’s, and the take is its first own', () => {
    const ledger = evolveLedger(given(opened(3, 4)), { kind: 'took', event: taken(10, [7], { seq: 11, version: 4 }) });
    expect([ledger.cursor, ledger.version, ledger.firstOwnTake]).toEqual([10, 4, 4]);
  });

  it('given a cursor at 20, when another process’s take through 12 is read back, then the version follows it and the cursor does not go back', () => {
    const ledger = evolveLedger(given(opened(1, 20)), { kind: 'read', event: taken(12, [9], { seq: 21, version: 2, actor: OTHER }) });
    expect([ledger.cursor, ledger.version, ledger.firstOwnTake]).toEqual([20, 2, Number.POSITIVE_INFINITY]);
  });

  it('given a cursor at 20, when the outbox opens again at a mark behind it, then the cursor stays and its own first take is still known', () => {
    const before = given(opened(1, 5), { kind: 'took', event: taken(20, [6], { seq: 21, version: 2 }) });
    const ledger = evolveLedger(before, opened(3, 8));
    expect([ledger.cursor, ledger.version, ledger.firstOwnTake]).toEqual([20, 3, 2]);
  });

  it('given version 4, when a record of this process commits at version 5, then the version follows; at version 7 (another wrote between), it stays for the next take to fail and reload', () => {
    const ledger = given(opened(4, 10));
    expect(evolveLedger(ledger, { kind: 'recorded', event: performed(7, { seq: 30, version: 5 }) }).version).toBe(5);
    expect(evolveLedger(ledger, { kind: 'recorded', event: performed(7, { seq: 30, version: 7 }) }).version).toBe(4);
  });

  it('given a cursor at 10, when read past 9, then nothing changes (the same ledger); past 15, the cursor moves', () => {
    const ledger = given(opened(1, 10));
    expect(evolveLedger(ledger, { kind: 'past', through: 9 })).toBe(ledger);
    expect(evolveLedger(ledger, { kind: 'past', through: 15 }).cursor).toBe(15);
  });
});

describe('the ledger: pending effects with implicit takes', () => {
  const decided = (seq: number, effect?: string, settles: string | null = null): LedgerEvent => ({
    kind: 'decided',
    seq,
    settles,
    ...(effect ? { effect } : {}),
  });

  it('given effects of runs a and b, when an input of run a is read, then a’s effects before it are settled, b’s stay pending', () => {
    const ledger = given(opened(0, 0), decided(3, 'run:a'), decided(4, 'run:b'), decided(5, 'run:a'));
    const after = evolveLedger(ledger, decided(6, undefined, 'run:a'));
    expect([...after.pending]).toEqual([[4, { key: 'run:b', take: 4 }]]);
  });

  it('given an effect of run a at seq 8, when an earlier input of run a is read (seq 7), then it stays pending', () => {
    const ledger = given(opened(0, 0), decided(8, 'run:a'));
    expect([...evolveLedger(ledger, decided(7, undefined, 'run:a')).pending.keys()]).toEqual([8]);
  });

  it('given a pending effect, when its record is read or written, or it is settled with nothing written, then it is no longer pending', () => {
    const ledger = given(opened(0, 0), decided(8, 'run:a'));
    expect(evolveLedger(ledger, { kind: 'read', event: performed(8, { seq: 9, version: 1 }) }).pending.size).toBe(0);
    expect(evolveLedger(ledger, { kind: 'recorded', event: performed(8, { seq: 9, version: 1 }) }).pending.size).toBe(0);
    expect(evolveLedger(ledger, { kind: 'settled', effect: 8 }).pending.size).toBe(0);
  });

  it('given a ledger, when an event that neither calls for an effect nor settles one is read, then it is the same ledger', () => {
    const ledger = given(opened(0, 0), decided(8, 'run:a'));
    expect(evolveLedger(ledger, decided(9))).toBe(ledger);
  });

  it('given a life that began at seq 10, then only its writer’s effects after 10 are its own', () => {
    const ledger = given(opened(0, 0, 10));
    expect(isOwn(ledger, stored('x', {}, { seq: 11, version: 1 }), ME)).toBe(true);
    expect(isOwn(ledger, stored('x', {}, { seq: 10, version: 1 }), ME)).toBe(false);
    expect(isOwn(ledger, stored('x', {}, { seq: 11, version: 1, actor: OTHER }), ME)).toBe(false);
  });
});

describe('the ledger: marks', () => {
  it('given a mark at cursor 0, when the cursor moves MARK_EVERY - 1, then no save is due but one by time is; at MARK_EVERY, one is', () => {
    const ledger = given(opened(0, 0), { kind: 'past', through: MARK_EVERY - 1 });
    expect([markDue(ledger), markDue(ledger, true)]).toEqual([false, true]);
    expect(markDue(evolveLedger(ledger, { kind: 'past', through: MARK_EVERY }))).toBe(true);
  });

  it('given a cursor moved, when its mark is saved, then none is due, by time either', () => {
    const ledger = given(opened(0, 0), { kind: 'past', through: 5_000 }, { kind: 'marked', mark: { version: 0, cursor: 5_000, pending: {} } });
    expect([markDue(ledger), markDue(ledger, true)]).toEqual([false, false]);
  });
});

describe('the ledger: what a restart settles', () => {
  const context = { writer: ME, implicit: false, held: undefined, performing: false };

  it('given a take by another writer, then its process is to be probed', () => {
    expect(takerOf(given(opened(1, 2)), taken(2, [2], { seq: 3, version: 1, actor: OTHER }), context)).toBe('probe');
  });

  it('given a take by this writer below its first own take (an earlier life with the same host:pid), then it is gone; at or after it, it is here', () => {
    const ledger = given(opened(1, 2), { kind: 'took', event: taken(9, [8], { seq: 10, version: 3 }) });
    expect(takerOf(ledger, taken(2, [2], { seq: 3, version: 1 }), context)).toBe('gone');
    expect(takerOf(ledger, taken(9, [8], { seq: 10, version: 3 }), context)).toBe('here');
  });

  it('given implicit takes and a life from seq 10, then this writer’s effect at seq 10 is an earlier life’s, at 11 this one’s', () => {
    const ledger = given(opened(0, 0, 10));
    const implicit = { ...context, implicit: true };
    expect(takerOf(ledger, stored('x', {}, { seq: 10, version: 1, stream: 'run:a' }), implicit)).toBe('gone');
    expect(takerOf(ledger, stored('x', {}, { seq: 11, version: 1, stream: 'run:a' }), implicit)).toBe('here');
  });

  it('given a take under epoch 2, then it is gone once epoch 3 is held, left while no lease is held, and gone at epoch 2 only if this process does not perform it', () => {
    const take = taken(2, [2], { seq: 3, version: 1, actor: OTHER }, 2);
    const ledger = given(opened(1, 2));
    expect(takerOf(ledger, take, { ...context, held: { epoch: 3, holder: 'b' } })).toBe('gone');
    expect(takerOf(ledger, take, { ...context, held: { epoch: 0, holder: '' } })).toBe('here');
    expect(takerOf(ledger, take, { ...context, held: { epoch: 2, holder: 'a' } })).toBe('gone');
    expect(takerOf(ledger, take, { ...context, held: { epoch: 2, holder: 'a' }, performing: true })).toBe('here');
  });

  it('given a gone taker, then an at-least-once effect is performed again (kept when this version cannot read it), an at-most-once one interrupted', () => {
    expect(settlementOf('at-least-once', true)).toBe('perform');
    expect(settlementOf('at-least-once', false)).toBe('keep');
    expect(settlementOf('at-most-once', true)).toBe('interrupt');
    expect(settlementOf('at-most-once', false)).toBe('interrupt');
  });
});

describe('the ledger: effects under a lease (EpochTakes)', () => {
  const under = { epoch: 2, holder: 'a' };

  it('given an effect taken under epoch 2 by holder a, then it may start only while a holds epoch 2; one taken under no lease always may', () => {
    expect(mayStartUnder(under, { epoch: 2, holder: 'a' })).toBe(true);
    expect(mayStartUnder(under, { epoch: 3, holder: 'a' })).toBe(false);
    expect(mayStartUnder(under, null)).toBe(false);
    expect(mayStartUnder(undefined, null)).toBe(true);
  });

  it('given its record, then it is appended while epoch 2 is held, waits while none is, and is given up once another epoch is', () => {
    expect(recordUnder(under, { epoch: 2, holder: 'a' })).toBe('append');
    expect(recordUnder(under, null)).toBe('wait');
    expect(recordUnder(under, { epoch: 0, holder: '' })).toBe('wait');
    expect(recordUnder(under, { epoch: 3, holder: 'b' })).toBe('give up');
  });
});
