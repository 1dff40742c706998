import { hostname } from 'node:os';
import Database from 'better-sqlite3';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import type { DomainEvent } from '../../../events/catalog.ts';
import { FakeClock } from '../../../runtime/actors/clock.ts';
import type { Delivery, EffectConsumer } from '../../../runtime/actors/effectConsumer.ts';
import { Outbox } from '../../../runtime/actors/outbox.ts';
import { isProcessAlive } from '../../../runtime/actors/processes.ts';
import type { EventStore } from '../../../runtime/store/eventStore.ts';
import { counterEventOf } from '../../fixtures/counter/counterEvents.ts';
import { openCounterStore } from '../../fixtures/counter/counterStore.ts';
import { bumped, milestone } from '../../support/events.ts';
import { stampedAt } from '../../support/stampedAt.ts';
import { tempDbPath } from '../../support/tempStore.ts';

/** A consumer that announces milestones, counting every time it performs one, by effect seq. */
function announcer(delivery: Delivery = 'at-most-once', onPerform?: (event: DomainEvent) => Promise<void>) {
  const performed = new Map<number, number>();
  const consumer: EffectConsumer<{ total: number }> = {
    name: 'announce',
    delivery,
    effectOf: (event) => {
      const counter = counterEventOf(event);
      return counter?.type === 'counter.milestone.reached' ? { total: counter.data.total } : null;
    },
    async perform(_effect, event) {
      performed.set(event.seq, (performed.get(event.seq) ?? 0) + 1);
      await onPerform?.(event);
      return { ok: true };
    },
  };
  return { consumer, performed };
}

/** Appends `count` bumps, every other one followed by a milestone (an effect); returns the milestones' seqs. */
async function appendWithMilestones(store: EventStore, count: number, stream = 'counter:a'): Promise<number[]> {
  const effects: number[] = [];
  for (let i = 0; i < count; i++) {
    const events = i % 2 === 0 ? [bumped(stream, i), milestone(stream, i)] : [bumped(stream, i)];
    const result = await store.append({ expected: { [stream]: 'any' }, events });
    if (!result.ok) throw result.conflict;
    effects.push(...result.events.filter((e) => e.type === 'counter.milestone.reached').map((e) => e.seq));
  }
  return effects;
}

/** Lets the event loop turn `n` times: other appends and drains get to run in between. */
function turns(n: number): () => Promise<void> {
  return async () => {
    for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
  };
}

function outboxTypes(events: readonly DomainEvent[]): string[] {
  return events.map((e) => e.type);
}

describe('outbox: effects run after the commit that decided them', () => {
  it('given committed effects, when drained, then each is performed once, after its take committed, and a second drain performs nothing', async () => {
    const store = await openCounterStore();
    const effects = await appendWithMilestones(store, 6);
    const takenBefore: boolean[] = [];
    const { consumer, performed } = announcer('at-most-once', async (event) => {
      const takes = (await store.readStream('outbox:announce')).filter((e) => e.type === 'outbox.taken');
      takenBefore.push(takes.some((t) => t.type === 'outbox.taken' && t.data.effects.includes(event.seq)));
    });
    const outbox = new Outbox(store, consumer, stampedAt(1));
    await outbox.open();

    expect(await outbox.drain()).toBe(3);
    // Lets the drain in flight end: the end of a drain is where it used to read the log.
    await outbox.drain();

    expect([...performed]).toEqual(effects.map((seq) => [seq, 1]));
    expect(takenBefore).toEqual([true, true, true]);
    const stream = await store.readStream('outbox:announce');
    expect(stream.filter((e) => e.type === 'outbox.performed').map((e) => e.type === 'outbox.performed' && e.data)).toEqual(
      effects.map((effect) => ({ effect, ok: true })),
    );
  });

  it('given effects committed after a drain, when drained again, then only the new ones are performed', async () => {
    const store = await openCounterStore();
    const first = await appendWithMilestones(store, 2);
    const { consumer, performed } = announcer();
    const outbox = new Outbox(store, consumer, stampedAt(1));
    await outbox.open();
    await outbox.drain();

    const second = await appendWithMilestones(store, 3, 'counter:b');

    expect(await outbox.drain()).toBe(2);
    expect([...performed.keys()]).toEqual([...first, ...second]);
  });

  it('given a failing effect, when drained, then it is recorded performed with ok false and its detail, and not retried', async () => {
    const store = await openCounterStore();
    await appendWithMilestones(store, 1);
    const outbox = new Outbox(
      store,
      {
        name: 'announce',
        delivery: 'at-least-once',
        effectOf: (event) => (counterEventOf(event)?.type === 'counter.milestone.reached' ? event.seq : null),
        perform: async () => {
          throw new Error('the hook exited 3');
        },
      },
      stampedAt(1),
    );
    await outbox.open();

    expect(await outbox.drain()).toBe(1);
    // Lets the drain in flight end: the end of a drain is where it used to read the log.
    await outbox.drain();

    expect((await store.lastOfStream('outbox:announce'))?.data).toEqual({ effect: 2, ok: false, detail: 'the hook exited 3' });
  });

  it('given two outboxes of one consumer on two stores over one file, when both drain concurrently while effects keep coming, then no effect is performed twice or missed', async () => {
    const path = tempDbPath();
    const stores = [await openCounterStore(path), await openCounterStore(path)];
    // Performing takes a few turns of the event loop, as a real effect would: the other outbox gets its chances.
    const consumers = stores.map(() => announcer('at-most-once', turns(3)));
    const outboxes = stores.map((store, i) => new Outbox(store, consumers[i]!.consumer, stampedAt(1)));
    for (const outbox of outboxes) await outbox.open();
    const effects = await appendWithMilestones(stores[0]!, 100);

    const rounds = [];
    for (let round = 0; round < 10; round++) {
      rounds.push(outboxes[0]!.drain(), outboxes[1]!.drain(), appendWithMilestones(stores[round % 2]!, 10, `counter:r${round}`));
      if (round % 3 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    const outcomes = await Promise.all(rounds);
    effects.push(...outcomes.filter((o): o is number[] => Array.isArray(o)).flat());
    await Promise.all(outboxes.map((o) => o.drain()));

    expect(effects).toHaveLength(100);
    const performed = new Map<number, number>();
    for (const { performed: own } of consumers) for (const [seq, times] of own) performed.set(seq, (performed.get(seq) ?? 0) + times);
    expect(consumers.map((c) => c.performed.size)).not.toContain(0);
    expect([...performed.keys()].sort((a, b) => a - b)).toEqual([...effects].sort((a, b) => a - b));
    expect([...performed.values()].every((times) => times === 1)).toBe(true);
    const records = (await stores[1]!.readStream('outbox:announce')).filter((e) => e.type === 'outbox.performed');
    expect(records).toHaveLength(100);
  });

  it('given an at-most-once effect taken by a process that died, when the outbox opens, then it is recorded interrupted and never performed', async () => {
    const path = tempDbPath();
    const store = await openCounterStore(path);
    const dead = await openCounterStore(path, { writer: `${hostname()}:999999` });
    expect(isProcessAlive(999999)).toBe(false);
    const [effect] = await appendWithMilestones(store, 1);
    await dead.append({
      expected: { 'outbox:announce': 0 },
      events: [{ stream: 'outbox:announce', type: 'outbox.taken', data: { through: 2, effects: [effect!] }, at: 1 }],
    });
    const { consumer, performed } = announcer('at-most-once');
    const outbox = new Outbox(store, consumer, stampedAt(5));

    await outbox.open();
    // Lets the drain in flight end: the end of a drain is where it used to read the log.
    await outbox.drain();

    expect(performed.size).toBe(0);
    const stream = await store.readStream('outbox:announce');
    expect(outboxTypes(stream)).toEqual(['outbox.taken', 'outbox.interrupted']);
    expect(stream[1]).toMatchObject({
      at: 5,
      actor: store.writer,
      data: { effect, detail: `taken by ${hostname()}:999999, which stopped before it finished` },
    });
    // Opened again (a restart), it is settled: not interrupted twice.
    await new Outbox(store, consumer, stampedAt(6)).open();
    expect(outboxTypes(await store.readStream('outbox:announce'))).toEqual(['outbox.taken', 'outbox.interrupted']);
  });

  it('given an at-least-once effect taken by a process that died, when the outbox opens, then it is performed again, once', async () => {
    const path = tempDbPath();
    const store = await openCounterStore(path);
    const dead = await openCounterStore(path, { writer: `${hostname()}:999999` });
    const [effect] = await appendWithMilestones(store, 1);
    await dead.append({
      expected: { 'outbox:announce': 0 },
      events: [{ stream: 'outbox:announce', type: 'outbox.taken', data: { through: 2, effects: [effect!] }, at: 1 }],
    });
    const { consumer, performed } = announcer('at-least-once');

    await new Outbox(store, consumer, stampedAt(5)).open();
    await new Outbox(store, consumer, stampedAt(6)).open();

    expect([...performed]).toEqual([[effect, 1]]);
    expect(outboxTypes(await store.readStream('outbox:announce'))).toEqual(['outbox.taken', 'outbox.performed']);
  });

  it("given an at-least-once effect taken by an earlier process that had this process's host:pid (a container's pid 1, restarted), when the outbox opens, then it is performed again, once", async () => {
    const path = tempDbPath();
    const store = await openCounterStore(path);
    // The life before this one: the same host name and pid, so the same writer.
    const earlier = await openCounterStore(path, { writer: store.writer });
    const [effect] = await appendWithMilestones(store, 1);
    await earlier.append({
      expected: { 'outbox:announce': 0 },
      events: [{ stream: 'outbox:announce', type: 'outbox.taken', data: { through: 2, effects: [effect!] }, at: 1 }],
    });
    const { consumer, performed } = announcer('at-least-once');

    await new Outbox(store, consumer, stampedAt(5)).open();
    await new Outbox(store, consumer, stampedAt(6)).open();

    expect([...performed]).toEqual([[effect, 1]]);
    expect(outboxTypes(await store.readStream('outbox:announce'))).toEqual(['outbox.taken', 'outbox.performed']);
  });

  it('given an effect taken by a live process, when another outbox opens, then it leaves it to its taker', async () => {
    const path = tempDbPath();
    const store = await openCounterStore(path);
    const alive = await openCounterStore(path, { writer: `${hostname()}:${process.ppid}` });
    const [effect] = await appendWithMilestones(store, 1);
    await alive.append({
      expected: { 'outbox:announce': 0 },
      events: [{ stream: 'outbox:announce', type: 'outbox.taken', data: { through: 2, effects: [effect!] }, at: 1 }],
    });
    const { consumer, performed } = announcer('at-least-once');

    await new Outbox(store, consumer, stampedAt(5)).open();

    expect(performed.size).toBe(0);
    expect(outboxTypes(await store.readStream('outbox:announce'))).toEqual(['outbox.taken']);
  });

  it('given a history of effects, when a consumer that never ran opens at the present, then it performs nothing from history, only what comes after', async () => {
    const store = await openCounterStore();
    await appendWithMilestones(store, 10);
    const { consumer, performed } = announcer();
    const outbox = new Outbox(store, consumer, stampedAt(1));

    await outbox.open(await store.headSeq());
    // Lets the drain in flight end: the end of a drain is where it used to read the log.
    await outbox.drain();
    const [later] = await appendWithMilestones(store, 1, 'counter:new');
    expect(await outbox.drain()).toBe(1);

    expect([...performed.keys()]).toEqual([later]);
    // The start is itself an event: a restart resumes from it, it does not start at the present again.
    const restarted = announcer();
    const again = new Outbox(store, restarted.consumer, stampedAt(1));
    await again.open(await store.headSeq());
    expect(outboxTypes(await store.readStream('outbox:announce'))[0]).toBe('outbox.taken');
  });

  it('given a follow()ing outbox, when effects are appended, then it performs them as they commit', async () => {
    const store = await openCounterStore(tempDbPath(), { pollMs: 10 });
    const clock = new FakeClock();
    let resolveSeen: () => void = () => {};
    const seen = new Promise<void>((resolve) => {
      resolveSeen = resolve;
    });
    const { consumer, performed } = announcer('at-most-once', async () => {
      if (performed.size === 3) resolveSeen();
    });
    const outbox = new Outbox(store, consumer, stampedAt(clock.now()));
    await outbox.open();

    const subscription = outbox.follow();
    try {
      const effects = await appendWithMilestones(store, 6);
      await Promise.race([seen, new Promise((_, reject) => setTimeout(() => reject(new Error('not performed within 5 s')), 5_000))]);
      await outbox.drain();
      expect([...performed]).toEqual(effects.map((seq) => [seq, 1]));
    } finally {
      subscription.unsubscribe();
    }
  });

  it('given a following outbox, when effects are appended one by one, then each is performed once, in order, and the log is not read again once the follow caught up', async () => {
    // No poll within the test: every new event reaches the follower through this store's own commits.
    const store = await openCounterStore(tempDbPath(), { pollMs: 60_000 });
    const history = await appendWithMilestones(store, 3);
    const order: number[] = [];
    const { consumer, performed } = announcer('at-most-once', async (event) => {
      order.push(event.seq);
    });
    const outbox = new Outbox(store, consumer, stampedAt(1));
    await outbox.open();
    const readAll = vi.spyOn(store, 'readAll');

    const subscription = outbox.follow();
    onTestFinished(() => subscription.unsubscribe());
    await vi.waitFor(() => expect(order).toEqual(history));
    // The follow read the history once; from here on its feed has every event, gapless.
    const caughtUp = readAll.mock.calls.length;
    expect(caughtUp).toBeGreaterThan(0);

    const effects = [...history];
    for (let i = 0; i < 20; i++) {
      const [effect] = await appendWithMilestones(store, 1, `counter:n${i}`);
      effects.push(effect!);
      await vi.waitFor(() => expect(order.at(-1)).toBe(effect), { interval: 2 });
    }
    // Lets the drain in flight end: the end of a drain is where it used to read the log.
    await outbox.drain();

    expect(order).toEqual(effects);
    expect([...performed.values()].every((times) => times === 1)).toBe(true);
    // Each drain used to end with a query for more: with a feed that has no gaps, an empty feed is the answer.
    expect(readAll.mock.calls.slice(caughtUp)).toEqual([]);
  });

  it('given a following outbox, when another process on the same file appends effects between its own, then the poll brings them and each is performed once, in order', async () => {
    const path = tempDbPath();
    const store = await openCounterStore(path, { pollMs: 10 });
    const other = await openCounterStore(path);
    const order: number[] = [];
    const { consumer, performed } = announcer('at-most-once', async (event) => {
      order.push(event.seq);
    });
    const outbox = new Outbox(store, consumer, stampedAt(1));
    await outbox.open();
    const subscription = outbox.follow();
    onTestFinished(() => subscription.unsubscribe());

    const effects: number[] = [];
    for (let i = 0; i < 10; i++) {
      // Interleaved: the other store's commits never reach this store's commit feed, and they leave a
      // gap before this store's next commit, which the follower must fill from the log, not skip.
      effects.push(...(await appendWithMilestones(i % 3 === 2 ? store : other, 1, `counter:p${i}`)));
    }

    await vi.waitFor(() => expect(order).toEqual(effects), { timeout: 5_000 });
    // A few more polls: nothing is performed again.
    await new Promise((r) => setTimeout(r, 50));
    expect(order).toEqual(effects);
    expect([...performed.values()].every((times) => times === 1)).toBe(true);
  });
});

describe('outbox: effects under way at once', () => {
  /** A consumer whose performs wait until the test lets each go, by effect seq. */
  function gated(concurrency: number | undefined) {
    const started: number[] = [];
    const finished: number[] = [];
    const gates = new Map<number, () => void>();
    const consumer: EffectConsumer<number> = {
      name: 'gated',
      delivery: 'at-least-once',
      ...(concurrency === undefined ? {} : { concurrency }),
      effectOf: (event) => (counterEventOf(event)?.type === 'counter.milestone.reached' ? event.seq : null),
      async perform(seq) {
        started.push(seq);
        await new Promise<void>((resolve) => gates.set(seq, resolve));
        finished.push(seq);
        return { ok: true };
      },
    };
    const release = (seq: number) => {
      const open = gates.get(seq);
      if (!open) throw new Error(`effect ${seq} is not waiting`);
      gates.delete(seq);
      open();
    };
    return { consumer, started, finished, release, waiting: () => [...gates.keys()] };
  }

  /** A moment for what must NOT happen to show (what must happen is waited for, with until()). */
  const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

  it('given a concurrency of 3 and 5 effects, then 3 start in log order, the next starts as one ends, and the drain ends with the last', async () => {
    const store = await openCounterStore();
    const effects = await appendWithMilestones(store, 10);
    const gate = gated(3);
    const outbox = new Outbox(store, gate.consumer, stampedAt(1));
    await outbox.open();

    let drained: number | null = null;
    const drain = outbox.drain().then((n) => (drained = n));
    await until(() => gate.started.length >= 3);
    await settle(); // and no fourth
    expect(gate.started).toEqual(effects.slice(0, 3));

    // A slow first effect holds back nothing behind it but its own slot.
    gate.release(effects[1]!);
    await until(() => gate.started.length >= 4);
    await settle(); // and no fifth
    expect(gate.started).toEqual(effects.slice(0, 4));
    gate.release(effects[2]!);
    gate.release(effects[3]!);
    await until(() => gate.started.length >= effects.length);
    expect(gate.started).toEqual(effects);
    expect(drained).toBeNull();

    gate.release(effects[4]!);
    gate.release(effects[0]!);
    await drain;
    expect(drained).toBe(5);
    expect(gate.finished).toEqual([effects[1], effects[2], effects[3], effects[4], effects[0]]);
    const records = (await store.readStream('outbox:gated')).filter((e) => e.type === 'outbox.performed');
    expect(records.map((e) => e.type === 'outbox.performed' && e.data.effect).sort((a, b) => Number(a) - Number(b))).toEqual(effects);
  });

  it('given no concurrency named, then effects are performed one after another', async () => {
    const store = await openCounterStore();
    const effects = await appendWithMilestones(store, 4);
    const gate = gated(undefined);
    const outbox = new Outbox(store, gate.consumer, stampedAt(1));
    await outbox.open();

    const drain = outbox.drain();
    await until(() => gate.started.length >= 1);
    await settle(); // and no second while the first is under way
    expect(gate.started).toEqual([effects[0]]);
    gate.release(effects[0]!);
    await until(() => gate.started.length >= 2);
    expect(gate.started).toEqual(effects);
    gate.release(effects[1]!);
    expect(await drain).toBe(2);
  });

  it('given a following outbox with effects under way when new ones are taken, then every take commits first time and each effect is taken and performed once', async () => {
    const store = await openCounterStore();
    const refused: string[] = [];
    const append = store.append.bind(store);
    vi.spyOn(store, 'append').mockImplementation(async (request) => {
      const result = await append(request);
      if (!result.ok) refused.push(Object.keys(request.expected).join());
      return result;
    });
    const performed = new Map<number, number>();
    const consumer: EffectConsumer<number> = {
      name: 'busy',
      delivery: 'at-least-once',
      concurrency: 4,
      effectOf: (event) => (counterEventOf(event)?.type === 'counter.milestone.reached' ? event.seq : null),
      async perform(seq) {
        performed.set(seq, (performed.get(seq) ?? 0) + 1);
        // Ends a few turns later: records of earlier effects land while later ones are taken.
        await turns(1 + (seq % 4))();
        return { ok: true };
      },
    };
    const outbox = new Outbox(store, consumer, stampedAt(1));
    await outbox.open();
    const following = outbox.follow();
    onTestFinished(() => following.unsubscribe());

    const effects: number[] = [];
    for (let round = 0; round < 20; round++) effects.push(...(await appendWithMilestones(store, 3, `counter:r${round}`)));
    await until(() => performed.size === effects.length);
    await outbox.drain();

    expect(refused).toEqual([]);
    expect([...performed.keys()].sort((a, b) => a - b)).toEqual(effects);
    expect([...performed.values()].every((times) => times === 1)).toBe(true);
    const stream = await store.readStream('outbox:busy');
    expect(stream.map((e) => e.version)).toEqual(stream.map((_, i) => i + 1));
    const taken = stream.flatMap((e) => (e.type === 'outbox.taken' ? e.data.effects : []));
    expect(taken).toEqual(effects);
    expect(stream.filter((e) => e.type === 'outbox.performed')).toHaveLength(effects.length);
  });
});

/** Resolves once `check` holds, looking every 10 ms; fails after 5 s. */
async function until(check: () => boolean): Promise<void> {
  const end = Date.now() + 5_000;
  while (!check()) {
    if (Date.now() > end) throw new Error('waited 5 s in vain');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('outbox: effects that turn out to call for nothing', () => {
  it('given a consumer that finds some effects not needed, then those are neither taken, performed nor recorded, also after a reopen', async () => {
    const store = await openCounterStore();
    const effects = await appendWithMilestones(store, 8);
    const wanted = new Set(effects.filter((_, i) => i % 2 === 0));
    const { consumer, performed } = announcer('at-least-once');
    const picky: EffectConsumer<{ total: number }> = { ...consumer, needed: async (_effect, event) => wanted.has(event.seq) };
    const outbox = new Outbox(store, picky, stampedAt(1));
    await outbox.open();

    expect(await outbox.drain()).toBe(wanted.size);
    expect([...performed.keys()]).toEqual([...wanted]);
    const stream = await store.readStream('outbox:announce');
    expect(stream.flatMap((e) => (e.type === 'outbox.taken' ? e.data.effects : []))).toEqual([...wanted]);
    expect(stream.filter((e) => e.type === 'outbox.performed').map((e) => e.type === 'outbox.performed' && e.data.effect)).toEqual([...wanted]);

    // The cursor went past the unneeded ones: a reopened outbox asks again and still performs nothing twice.
    const reopened = new Outbox(store, picky, stampedAt(1));
    await reopened.open();
    expect(await reopened.drain()).toBe(0);
    expect([...performed.values()].every((times) => times === 1)).toBe(true);
  });
});

describe('outbox: two processes on one consumer stream', () => {
  it('given a take by another process that ends below where this one already read, when its own take loses to it, then its cursor does not move back: it reads nothing again', async () => {
    const path = tempDbPath();
    const [a, b] = [await openCounterStore(path), await openCounterStore(path)];
    // One stream, two processes that call for different effects (two boards with different hooks).
    const milestonesOf = (stream: string, performed: number[], needed?: () => Promise<boolean>): EffectConsumer<number> => ({
      name: 'shared',
      delivery: 'at-most-once',
      effectOf: (event) => {
        const counter = counterEventOf(event);
        return counter?.type === 'counter.milestone.reached' && counter.stream === stream ? counter.seq : null;
      },
      ...(needed ? { needed } : {}),
      async perform(seq) {
        performed.push(seq);
        return { ok: true };
      },
    });
    let reading: () => void = () => {};
    const read = new Promise<void>((resolve) => (reading = resolve));
    let letTake: () => void = () => {};
    const gate = new Promise<void>((resolve) => (letTake = resolve));
    const ofA: number[] = [];
    const ofB: number[] = [];
    const outboxA = new Outbox(a, milestonesOf('counter:a', ofA), stampedAt(1));
    const outboxB = new Outbox(
      b,
      milestonesOf('counter:b', ofB, async () => {
        reading();
        await gate;
        return true;
      }),
      stampedAt(1),
    );
    await outboxA.open();
    await outboxB.open();

    const [bMilestone] = await appendWithMilestones(a, 1, 'counter:b');
    // B has read its page (through seq 2) and is about to take it; meanwhile A reads on, past seq 4.
    const drainB = outboxB.drain();
    await read;
    await appendWithMilestones(a, 2, 'counter:c');
    expect(await outboxA.drain()).toBe(0);
    letTake();
    await drainB;
    expect(ofB).toEqual([bMilestone]);

    const readAll = vi.spyOn(a, 'readAll');
    const [aMilestone] = await appendWithMilestones(a, 1, 'counter:a');
    expect(await outboxA.drain()).toBe(1);
    expect(ofA).toEqual([aMilestone]);
    // A had read through seq 4 before B's take (through seq 2) committed: it never reads from below 4 again.
    expect(readAll.mock.calls.map(([from]) => from).filter((from) => from < 4)).toEqual([]);
  });

  it('given an at-most-once take by a process that died, when two outboxes open at once, then it is recorded interrupted once', async () => {
    const path = tempDbPath();
    const stores = [await openCounterStore(path), await openCounterStore(path)];
    const dead = await openCounterStore(path, { writer: `${hostname()}:999999` });
    const [effect] = await appendWithMilestones(stores[0]!, 1);
    await dead.append({
      expected: { 'outbox:announce': 0 },
      events: [{ stream: 'outbox:announce', type: 'outbox.taken', data: { through: effect!, effects: [effect!] }, at: 1 }],
    });

    await Promise.all(stores.map((store) => new Outbox(store, announcer('at-most-once').consumer, stampedAt(5)).open()));

    expect(outboxTypes(await stores[0]!.readStream('outbox:announce'))).toEqual(['outbox.taken', 'outbox.interrupted']);
  });

  it('given an at-least-once take by a process that died, naming a row this version cannot read, when the outbox opens, then it stays taken for a version that can read it, and the next event is not performed in its place', async () => {
    const path = tempDbPath();
    const store = await openCounterStore(path, { foreignRows: () => {} });
    const dead = await openCounterStore(path, { writer: `${hostname()}:999999`, foreignRows: () => {} });
    // Seq 1: a row a newer runledger wrote (and, being newer, took as an effect); seq 2: a milestone.
    const raw = new Database(path);
    raw.exec(
      "INSERT INTO events (stream, version, type, data, at, cause, actor) VALUES ('counter:z', 1, 'counter.teleported', '{}', 1, NULL, 'newer:1')",
    );
    raw.close();
    const [milestoneSeq] = await appendWithMilestones(store, 1);
    expect(milestoneSeq).toBe(3);
    await dead.append({
      expected: { 'outbox:announce': 0 },
      events: [{ stream: 'outbox:announce', type: 'outbox.taken', data: { through: 1, effects: [1] }, at: 1 }],
    });
    const { consumer, performed } = announcer('at-least-once');
    const outbox = new Outbox(store, consumer, stampedAt(5));

    await outbox.open();
    expect(performed.size).toBe(0);
    expect(await outbox.drain()).toBe(1);

    expect([...performed]).toEqual([[milestoneSeq, 1]]);
    const stream = await store.readStream('outbox:announce');
    expect(stream.flatMap((e) => (e.type === 'outbox.performed' || e.type === 'outbox.interrupted' ? [[e.type, e.data.effect]] : []))).toEqual([
      ['outbox.performed', milestoneSeq],
    ]);
  });
});
