import { describe, expect, it } from 'vitest';
import { InvalidEventError } from '../../events/codec.ts';
import { AppendChain, type AppendResult, StaleVersionError } from '../../runtime/store/eventStore.ts';
import { nextTurn, openCountedStore, transactions } from '../support/countTransactions.ts';
import { bumped, oneTo } from '../support/events.ts';

const BROKEN_CHAIN = /an earlier append this one stood on was refused or failed/;

function refusal(result: AppendResult): StaleVersionError {
  if (result.ok) throw new Error(`expected a refusal, got seqs ${result.events.map((e) => e.seq).join(',')}`);
  return result.conflict;
}

/** An event the catalog does not know: `append()` refuses it before it is queued. */
const exploded = (stream: string) => ({ stream, type: 'counter.exploded', data: {}, at: 1 });

describe('AppendChain: links', () => {
  it('given a new chain, when links are taken, then they number its appends 0, 1, 2… and it is not broken', () => {
    const chain = new AppendChain();

    const links = [chain.next(), chain.next(), chain.next()];

    expect(links.map((l) => l.link)).toEqual([0, 1, 2]);
    expect(links.every((l) => l.chain === chain)).toBe(true);
    expect(chain.broken).toBe(false);
  });

  it('given a chain broken at a link, then that link and the earlier ones still hold, the later ones do not, and a later break does not move it', () => {
    const chain = new AppendChain();

    chain.breakAt(2);
    chain.breakAt(5);

    expect(chain.broken).toBe(true);
    expect([0, 1, 2, 3, 5].map((link) => chain.holds(link))).toEqual([true, true, true, false, false]);
    // An earlier break moves it back.
    chain.breakAt(1);
    expect([0, 1, 2].map((link) => chain.holds(link))).toEqual([true, true, false]);
  });
});

describe('append chains: a refused append refuses the rest of its chain unwritten', () => {
  it('given a chain whose first append is stale, when its later appends are queued in the same turn and in a later one, then they are refused unwritten while an unchained append of the batch commits', async () => {
    const store = await openCountedStore();
    // Another writer got to counter:a first: the chain's first append, expecting 0, is stale.
    await store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 100)] });
    const chain = new AppendChain();
    transactions.length = 0;

    // Each append expects the version the one before would have left: they stand on one another.
    const first = store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)], chain: chain.next() });
    const second = store.append({ expected: { 'counter:a': 1 }, events: [bumped('counter:a', 2)], chain: chain.next() });
    const unchained = store.append({ expected: { 'counter:b': 0 }, events: [bumped('counter:b', 7)] });
    const third = store.append({ expected: { 'counter:a': 2 }, events: [bumped('counter:a', 3)], chain: chain.next() });
    const [firstResult, secondResult, unchainedResult, thirdResult] = await Promise.all([first, second, unchained, third]);
    // Queued after the break is known: nothing may commit past the gap, even in a transaction of its own.
    // Its expected version (1) is the stream's actual one, so only the chain can refuse it.
    const later = await store.append({ expected: { 'counter:a': 1 }, events: [bumped('counter:a', 4)], chain: chain.next() });

    expect(refusal(firstResult)).toMatchObject({ stream: 'counter:a', expected: 0, actual: 1 });
    expect(refusal(firstResult).message).not.toMatch(BROKEN_CHAIN);
    for (const result of [secondResult, thirdResult, later]) {
      expect(refusal(result)).toBeInstanceOf(StaleVersionError);
      expect(refusal(result).message).toMatch(BROKEN_CHAIN);
      expect(refusal(result).stream).toBe('counter:a');
    }
    expect(chain.broken).toBe(true);
    expect(unchainedResult).toMatchObject({ ok: true, events: [{ seq: 2, stream: 'counter:b', version: 1 }] });
    // The first four shared one transaction; the later one had its own.
    expect(transactions.map((t) => t.length)).toEqual([4, 1]);
    expect((await store.readAll(0, 100)).map((e) => [e.stream, e.version, e.data])).toEqual([
      ['counter:a', 1, { total: 100 }],
      ['counter:b', 1, { total: 7 }],
    ]);
  });

  it('given a chain of four queued in one turn, when another writer slips in before its second, then the first commits, the second is stale, and the third and fourth are refused unwritten', async () => {
    const store = await openCountedStore();
    const chain = new AppendChain();
    transactions.length = 0;

    const results = Promise.all([
      store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)], chain: chain.next() }),
      // Another writer, in the same group commit, between link 0 and link 1.
      store.append({ expected: { 'counter:a': 'any' }, events: [bumped('counter:a', 1000)] }),
      store.append({ expected: { 'counter:a': 1 }, events: [bumped('counter:a', 2)], chain: chain.next() }),
      // Expects version 2, which the stream is at after the other writer: only the chain can refuse it.
      store.append({ expected: { 'counter:a': 2 }, events: [bumped('counter:a', 3)], chain: chain.next() }),
      store.append({ expected: { 'counter:a': 3 }, events: [bumped('counter:a', 4)], chain: chain.next() }),
    ]);
    const [link0, other, link1, link2, link3] = await results;

    expect(link0).toMatchObject({ ok: true, events: [{ seq: 1, version: 1, data: { total: 1 } }] });
    expect(other).toMatchObject({ ok: true, events: [{ seq: 2, version: 2, data: { total: 1000 } }] });
    expect(refusal(link1)).toMatchObject({ stream: 'counter:a', expected: 1, actual: 2 });
    expect(refusal(link1).message).not.toMatch(BROKEN_CHAIN);
    for (const result of [link2, link3]) expect(refusal(result).message).toMatch(BROKEN_CHAIN);
    expect(chain.broken).toBe(true);
    expect(transactions.map((t) => t.length)).toEqual([5]);
    expect((await store.readStream('counter:a')).map((e) => [e.version, e.data])).toEqual([
      [1, { total: 1 }],
      [2, { total: 1000 }],
    ]);
  });

  it('given two chains in one batch, when one breaks, then the other commits whole, in order', async () => {
    const store = await openCountedStore();
    await store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 100)] });
    const broken = new AppendChain();
    const healthy = new AppendChain();

    // Interleaved, so that the healthy chain's appends come both before and after the break.
    const results = await Promise.all([
      store.append({ expected: { 'counter:b': 0 }, events: [bumped('counter:b', 1)], chain: healthy.next() }),
      store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)], chain: broken.next() }),
      store.append({ expected: { 'counter:b': 1 }, events: [bumped('counter:b', 2)], chain: healthy.next() }),
      store.append({ expected: { 'counter:a': 1 }, events: [bumped('counter:a', 2)], chain: broken.next() }),
      store.append({ expected: { 'counter:b': 2 }, events: [bumped('counter:b', 3)], chain: healthy.next() }),
    ]);

    expect(results.map((r) => r.ok)).toEqual([true, false, true, false, true]);
    expect(healthy.broken).toBe(false);
    expect(broken.broken).toBe(true);
    expect((await store.readStream('counter:b')).map((e) => [e.version, e.data])).toEqual([
      [1, { total: 1 }],
      [2, { total: 2 }],
      [3, { total: 3 }],
    ]);
  });

  it('given a chain, when one of its appends fails validation at append(), then the chain is broken before append() returns and the next append of it is refused', async () => {
    const store = await openCountedStore();
    const chain = new AppendChain();

    const invalid = store.append({ expected: { 'counter:a': 0 }, events: [exploded('counter:a')], chain: chain.next() });
    // Handled now: it is awaited only after a later turn.
    const invalidError = invalid.then(
      () => null,
      (error: unknown) => error,
    );
    // Synchronously: an actor that decides its next input in the same turn must already see the gap.
    const brokenAtOnce = chain.broken;
    const next = store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)], chain: chain.next() });
    const inLaterTurn = await store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 2)], chain: chain.next() });

    expect(brokenAtOnce).toBe(true);
    expect(await invalidError).toBeInstanceOf(InvalidEventError);
    expect(refusal(await next).message).toMatch(BROKEN_CHAIN);
    expect(refusal(inLaterTurn).message).toMatch(BROKEN_CHAIN);
    expect(await store.headSeq()).toBe(0);
  });

  // Failed when the break was a flag read at commit time: a validation failure at append() also refused
  // the appends of the chain queued BEFORE it in the same turn. Links fix that: keep it as a guard.
  it('given a chained append queued for the group commit, when a later append of the chain fails validation in the same turn, then the earlier one still commits', async () => {
    const store = await openCountedStore();
    const chain = new AppendChain();
    const first = store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)], chain: chain.next() });

    const invalid = store.append({ expected: { 'counter:a': 1 }, events: [exploded('counter:a')], chain: chain.next() });

    await expect(invalid).rejects.toBeInstanceOf(InvalidEventError);
    expect(await first).toMatchObject({ ok: true, events: [{ version: 1 }] });
    expect((await store.readStream('counter:a')).map((e) => e.data)).toEqual([{ total: 1 }]);
  });

  it('given a chain of four queued in one turn, when its third (link 2) fails validation, then links 0 and 1 commit and link 3 is refused unwritten', async () => {
    const store = await openCountedStore();
    const chain = new AppendChain();
    transactions.length = 0;

    const link0 = store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)], chain: chain.next() });
    const link1 = store.append({ expected: { 'counter:a': 1 }, events: [bumped('counter:a', 2)], chain: chain.next() });
    const link2 = store.append({ expected: { 'counter:a': 2 }, events: [exploded('counter:a')], chain: chain.next() });
    const brokenAtOnce = chain.broken;
    // Expects version 2, the stream's actual one once links 0 and 1 commit: only the chain can refuse it.
    const link3 = store.append({ expected: { 'counter:a': 2 }, events: [bumped('counter:a', 4)], chain: chain.next() });

    expect(brokenAtOnce).toBe(true);
    await expect(link2).rejects.toBeInstanceOf(InvalidEventError);
    expect(await link0).toMatchObject({ ok: true, events: [{ seq: 1, version: 1 }] });
    expect(await link1).toMatchObject({ ok: true, events: [{ seq: 2, version: 2 }] });
    expect(refusal(await link3).message).toMatch(BROKEN_CHAIN);
    // Link 2 never reached the batch; links 0, 1 and 3 shared one transaction.
    expect(transactions.map((t) => t.length)).toEqual([3]);
    expect((await store.readStream('counter:a')).map((e) => e.data)).toEqual([{ total: 1 }, { total: 2 }]);
  });

  it('given a chain, when an append of it names no expected version for a stream it writes, then the chain breaks at once too', async () => {
    const store = await openCountedStore();
    const chain = new AppendChain();

    const bad = store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:b', 1)], chain: chain.next() });

    expect(chain.broken).toBe(true);
    await expect(bad).rejects.toThrow(/names no expected version/);
    expect(refusal(await store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)], chain: chain.next() })).message).toMatch(
      BROKEN_CHAIN,
    );
    expect(await store.headSeq()).toBe(0);
  });

  it('given a closed store, when a chained append is refused, then its chain is broken at once', async () => {
    const store = await openCountedStore();
    const chain = new AppendChain();
    await store.close();

    const refused = store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)], chain: chain.next() });

    expect(chain.broken).toBe(true);
    await expect(refused).rejects.toThrow(/closed/);
  });

  it('given a batch whose transaction throws, when it fails, then every append of it is rejected and every chain in it is broken', async () => {
    const store = await openCountedStore();
    const chain = new AppendChain();
    const other = new AppendChain();
    // The connection is pulled from under the store (its `closed` flag not set): the transaction itself throws.
    const appends = [
      store.append({ expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)], chain: chain.next() }),
      store.append({ expected: { 'counter:b': 0 }, events: [bumped('counter:b', 1)], chain: other.next() }),
    ];
    store.db.close();

    for (const append of appends) await expect(append).rejects.toThrow();
    expect(chain.broken).toBe(true);
    expect(other.broken).toBe(true);
    // Broken at the failed links: no later link of either chain may commit.
    expect(chain.holds(chain.next().link)).toBe(false);
    expect(other.holds(other.next().link)).toBe(false);
  });
});

describe('append chains: a healthy chain shares one group commit', () => {
  it('given 50 chained appends to one stream queued in one turn, when they commit, then all commit in order with consecutive versions, in one transaction', async () => {
    const store = await openCountedStore();
    const chain = new AppendChain();
    transactions.length = 0;

    const appends = oneTo(50).map((n) => store.append({ expected: { 'counter:a': n - 1 }, events: [bumped('counter:a', n)], chain: chain.next() }));
    // Nothing is written before the turn ends: the group commit waits for it.
    expect(transactions).toHaveLength(0);
    const results = await Promise.all(appends);

    expect(chain.broken).toBe(false);
    expect(results.map((r) => r.ok && [r.events[0]!.seq, r.events[0]!.version, r.events[0]!.data])).toEqual(
      oneTo(50).map((n) => [n, n, { total: n }]),
    );
    expect(transactions.map((t) => t.length)).toEqual([50]);
    expect((await store.readStream('counter:a')).map((e) => e.version)).toEqual(oneTo(50));
    await nextTurn();
    expect(transactions).toHaveLength(1);
  });
});
