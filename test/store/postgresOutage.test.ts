import { describe, expect, it } from 'vitest';
import { appendOrThrow } from '../../runtime/store/eventStore.ts';
import { LogUnwritableError } from '../../runtime/store/logUnwritable.ts';
import { openPostgresStore } from '../../runtime/store/postgres/postgresEventStore.ts';
import { counterCodec } from '../fixtures/counter/counterEvents.ts';
import { bumped } from '../support/events.ts';
import { record } from '../support/observe.ts';
import { outageProxy } from '../support/outageProxy.ts';
import { postgresKind } from '../support/storeKinds.ts';

async function until(what: string, ms: number, done: () => boolean): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('a subscription on PostgreSQL outlives the server going away', () => {
  it('given a subscriber whose reads fail while the server is unreachable, when it comes back, then the subscriber goes on from where it was: nothing missed, nothing repeated', async () => {
    const where = await postgresKind.fresh();
    const proxy = await outageProxy(new URL(where));
    const writer = await postgresKind.open(where);
    const reader = await postgresKind.open(proxy.url(where), { pollMs: 20 });
    await appendOrThrow(writer, { expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)] });
    const seen = record(reader.subscribe(0));
    await seen.untilCount(1);

    proxy.down();
    // Its polls keep trying (each a connection refused) while the server is away.
    await until('reads tried during the outage', 5_000, () => proxy.refused() >= 2);
    await appendOrThrow(writer, { expected: { 'counter:a': 1 }, events: [bumped('counter:a', 2)] });
    proxy.up();
    await appendOrThrow(writer, { expected: { 'counter:a': 2 }, events: [bumped('counter:a', 3)] });

    const events = await seen.untilCount(3, 10_000);
    expect(events.map((e) => e.seq)).toEqual([1, 2, 3]);
  });

  it('given a subscriber that never polls, when the server comes back after an outage, then LISTEN is taken up again and what was committed meanwhile is read at once', async () => {
    const where = await postgresKind.fresh();
    const proxy = await outageProxy(new URL(where));
    const writer = await postgresKind.open(where);
    const reader = await postgresKind.open(proxy.url(where), { pollMs: 600_000 });
    const seen = record(reader.subscribe(0));

    proxy.down();
    // The listening connection tries again (every second) while the server is away.
    await until('the listener trying again', 5_000, () => proxy.refused() >= 1);
    await appendOrThrow(writer, { expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)] });
    proxy.up();
    // What was seen before the next append: the recording's array goes on growing (seen once under load).
    const first = (await seen.untilCount(1, 10_000)).map((e) => e.seq);
    await appendOrThrow(writer, { expected: { 'counter:a': 1 }, events: [bumped('counter:a', 2)] });

    expect(first).toEqual([1]);
    expect((await seen.untilCount(2, 5_000)).map((e) => e.seq)).toEqual([1, 2]);
  });

  it('given an append in flight when the network to the server goes silent (no reset, nothing answers), then it fails as an outage within its time limit instead of waiting for ever', async () => {
    const where = await postgresKind.fresh();
    const proxy = await outageProxy(new URL(where));
    const store = await openPostgresStore(proxy.url(where), {
      codec: counterCodec,
      pollMs: 600_000,
      statementTimeoutMs: 300,
      report: () => undefined,
    });
    await appendOrThrow(store, { expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)] });

    proxy.freeze();
    const started = Date.now();
    const appended = store.append({ expected: { 'counter:a': 1 }, events: [bumped('counter:a', 2)] });

    await expect(appended).rejects.toBeInstanceOf(LogUnwritableError);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('given the network to the server gone silent, when the log is read, then the read fails as an outage within its time limit instead of holding its reader for ever', async () => {
    const where = await postgresKind.fresh();
    const proxy = await outageProxy(new URL(where));
    const store = await openPostgresStore(proxy.url(where), {
      codec: counterCodec,
      pollMs: 600_000,
      statementTimeoutMs: 300,
      report: () => undefined,
    });
    await appendOrThrow(store, { expected: { 'counter:a': 0 }, events: [bumped('counter:a', 1)] });

    proxy.freeze();
    const started = Date.now();

    // On the connection it has (a new one is bounded by the pool's connect timeout, 10 s).
    await expect(store.streamVersion('counter:a')).rejects.toBeInstanceOf(LogUnwritableError);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
