import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterEach, describe, expect, expectTypeOf, it, vi } from 'vitest';
import { messageOf } from '../../events/thrown.ts';
import { type Clock, FakeClock } from '../../runtime/actors/clock.ts';
import {
  type ActorRef,
  type ActorSpec,
  ActorStoppedError,
  type ActorSystem,
  type CrashReport,
  child,
  dispatch,
  InvalidActorNameError,
  isAwake,
  QueryTimeoutError,
  query,
  type ReplyTo,
  reply,
  spawnActor,
  startActorSystem,
  stop,
  stopSystem,
} from '../../runtime/actors/runtime.ts';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

type CounterMsg = { type: 'add'; n: number; delayMs?: number } | { type: 'boom' } | { type: 'get'; replyTo: ReplyTo<number> } | { type: 'ignore' };

/** A counter whose "log" is an array: hydrate sums it, receive appends to it, like a real actor. */
function counter(opts: { passivateAfterMs?: number; onCrash?: ActorSpec<{ total: number }, CounterMsg>['onCrash'] } = {}) {
  const log: number[] = [];
  const seen: number[] = [];
  const stats = { hydrations: 0, inFlight: 0, maxInFlight: 0 };
  const spec: ActorSpec<{ total: number }, CounterMsg> = {
    hydrate: async () => {
      stats.hydrations++;
      await sleep(1);
      return { total: log.reduce((a, b) => a + b, 0) };
    },
    receive: async (state, msg) => {
      stats.inFlight++;
      stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
      try {
        switch (msg.type) {
          case 'add':
            await sleep(msg.delayMs ?? 0);
            seen.push(msg.n);
            log.push(msg.n);
            return { total: state.total + msg.n };
          case 'boom':
            state.total += 1000; // corrupt the in-memory state, never logged: a reset must drop it
            throw new Error('boom');
          case 'get':
            reply(msg.replyTo, state.total);
            return state;
          case 'ignore':
            return state;
        }
      } finally {
        stats.inFlight--;
      }
    },
    ...opts,
  };
  return { spec, log, seen, stats };
}

/** Waits (bounded) until `ref` passivated: its idle timer is the runtime's, and fires when the machine lets it. */
const passivated = (ref: ActorRef<never>) => vi.waitFor(() => expect(isAwake(ref)).toBe(false), { timeout: 5_000, interval: 5 });

const get = (ref: ActorRef<CounterMsg>) => query(ref, (replyTo) => ({ type: 'get', replyTo }), 200);

let system: ActorSystem;
let reports: CrashReport[];
const start = (clock?: Clock) => {
  reports = [];
  system = startActorSystem({ onError: (r) => reports.push(r), ...(clock ? { clock } : {}) });
  return system;
};
afterEach(() => {
  if (system) stopSystem(system);
});

describe('nact 7.6.2 facts the runtime relies on', () => {
  it('does not await an async initialStateFunc, and reset calls it again', async () => {
    const nact = createRequire(import.meta.url)('nact');
    const sys = nact.start();
    let calls = 0;
    const states: unknown[] = [];
    const ref = nact.spawn(
      sys,
      async (state: unknown, msg: string) => {
        states.push(state);
        if (msg === 'boom') throw new Error('boom');
        return { n: 1 };
      },
      'probe',
      {
        initialStateFunc: async () => {
          calls++;
          return { n: 0 };
        },
        onCrash: (_m: unknown, _e: unknown, ctx: { reset: symbol }) => ctx.reset,
      },
    );
    for (const m of ['a', 'b', 'boom', 'c']) nact.dispatch(ref, m);
    await vi.waitFor(() => expect(states).toHaveLength(4), { timeout: 5_000, interval: 5 });
    nact.stop(sys);
    expect(calls).toBe(2);
    expect(states.map((s) => (s instanceof Promise ? 'promise' : s))).toEqual(['promise', { n: 1 }, { n: 1 }, 'promise']);
  });

  it('stops an actor and its descendants at once (the path free again), and a resume decided for an actor stopped in its crash hook takes no further message', async () => {
    const nact = createRequire(import.meta.url)('nact');
    const sys = nact.start();
    const seen: string[] = [];
    const record = (who: string) => async (state: unknown, msg: string) => {
      seen.push(`${who} ${msg}`);
      if (msg === 'boom') throw new Error('boom');
      return state;
    };
    const parent = nact.spawn(sys, record('parent'), 'parent', {
      onCrash: (_m: unknown, _e: unknown, ctx: { resume: symbol }) => {
        nact.stop(parent);
        nact.dispatch(kid, 'after its parent stopped'); // dropped: the kid stopped with it
        again = nact.spawn(sys, record('again'), 'parent'); // the path is free at once
        nact.dispatch(again, 'hello');
        return ctx.resume;
      },
    });
    const kid = nact.spawn(parent, record('kid'), 'kid');
    let again: unknown;
    nact.dispatch(parent, 'boom');
    nact.dispatch(parent, 'queued behind the crash');
    await vi.waitFor(() => expect(seen).toContain('again hello'), { timeout: 5_000, interval: 5 });
    for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
    nact.stop(sys);
    expect(seen).toEqual(['parent boom', 'again hello']);
  });
});

describe('actors/runtime', () => {
  it('handles async messages one at a time, in order', async () => {
    start();
    const c = counter();
    const ref = spawnActor(system, 'run-abc', c.spec);
    const delays = [15, 1, 8, 0, 3];
    for (const [i, delayMs] of delays.entries()) dispatch(ref, { type: 'add', n: i + 1, delayMs });
    expect(await get(ref)).toBe(15);
    expect(c.seen).toEqual([1, 2, 3, 4, 5]);
    expect(c.stats.maxInFlight).toBe(1);
    expect(c.stats.hydrations).toBe(1);
  });

  it('types messages and infers the reply type of a query from the message', async () => {
    start();
    type Msg = { type: 'count'; replyTo: ReplyTo<number> } | { type: 'label'; replyTo: ReplyTo<string> } | { type: 'tick' };
    const ref = spawnActor<null, Msg>(system, 'typed', {
      hydrate: () => null,
      receive: (s, m) => {
        if (m.type === 'count') reply(m.replyTo, 42);
        else if (m.type === 'label') reply(m.replyTo, 'run-abc');
        return s;
      },
    });
    const count = query(ref, (replyTo) => ({ type: 'count', replyTo }), 200);
    const label = query(ref, (replyTo) => ({ type: 'label', replyTo }), 200);
    expectTypeOf(count).toEqualTypeOf<Promise<number>>();
    expectTypeOf(label).toEqualTypeOf<Promise<string>>();
    expect([await count, await label]).toEqual([42, 'run-abc']);
    expect(dispatch(ref, { type: 'tick' })).toBe(true);
    const neverCalled = (m: Msg) => {
      // @ts-expect-error the reply type comes from the message
      if (m.type === 'count') reply(m.replyTo, 'forty-two');
    };
    expect(neverCalled).toBeTypeOf('function');
    // @ts-expect-error not a message of this actor
    expect(() => dispatch(ref, { type: 'tock' })).not.toThrow();
    // @ts-expect-error a query needs its timeout
    await expect(query(ref, (replyTo) => ({ type: 'count', replyTo }))).rejects.toThrow(RangeError);
  });

  it('rejects a query that is not answered in time, naming the actor', async () => {
    start();
    const ref = spawnActor(system, 'lane-1', counter().spec);
    const silent = query(ref, () => ({ type: 'ignore' }), 20);
    await expect(silent).rejects.toThrow(QueryTimeoutError);
    await expect(silent).rejects.toThrow(/"lane-1" timed out after 20 ms/);
    await expect(query(ref, () => ({ type: 'ignore' }), 0)).rejects.toThrow(RangeError);
    expect(await get(ref)).toBe(0); // still serving
  });

  it('on a crash, reports the message, rehydrates from the log and keeps serving', async () => {
    start();
    const c = counter();
    const ref = spawnActor(system, 'run-1', c.spec);
    dispatch(ref, { type: 'add', n: 1 });
    dispatch(ref, { type: 'add', n: 2 });
    dispatch(ref, { type: 'boom' });
    dispatch(ref, { type: 'add', n: 4 });
    expect(await get(ref)).toBe(7); // the +1000 of the crashed message is gone
    expect(c.stats.hydrations).toBe(2);
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatchObject({ actor: 'run-1', message: { type: 'boom' }, decision: 'reset', phase: 'receive' });
    expect(messageOf(reports[0]!.error)).toBe('boom');
  });

  it('treats a failed hydrate as a crash and hydrates again on the next message', async () => {
    start();
    let fail = true;
    const ref = spawnActor(system, 'flaky', {
      hydrate: () => {
        if (fail) {
          fail = false;
          throw new Error('db down');
        }
        return 5;
      },
      receive: (s: number, m: { replyTo: ReplyTo<number> }) => {
        reply(m.replyTo, s);
        return s;
      },
    });
    await expect(query(ref, (replyTo) => ({ replyTo }), 20)).rejects.toThrow(QueryTimeoutError);
    expect(await query(ref, (replyTo) => ({ replyTo }), 200)).toBe(5);
    expect(reports.map((r) => [r.phase, r.decision])).toEqual([['hydrate', 'reset']]);
  });

  it('honours resume and stop crash decisions', async () => {
    start();
    const resumed = counter({ onCrash: () => 'resume' });
    const r1 = spawnActor(system, 'resumer', resumed.spec);
    dispatch(r1, { type: 'add', n: 1 });
    dispatch(r1, { type: 'boom' });
    expect(await get(r1)).toBe(1001); // resume keeps the (here corrupted) state: that is why reset is the default
    expect(resumed.stats.hydrations).toBe(1);

    const r2 = spawnActor(system, 'stopper', counter({ onCrash: () => 'stop' }).spec);
    dispatch(r2, { type: 'boom' });
    // Stopped once its crash is handled, a turn or more later: waited for, bounded, not guessed.
    await vi.waitFor(() => expect(dispatch(r2, { type: 'add', n: 1 })).toBe(false), { timeout: 5_000, interval: 5 });
    expect(reports.map((r) => [r.actor, r.decision])).toEqual([
      ['resumer', 'resume'],
      ['stopper', 'stop'],
    ]);
  });

  it('validates actor names', () => {
    start();
    const { spec } = counter();
    for (const bad of ['run:abc', 'board/run', '', 'a b', 'x'.repeat(129), 'ü']) {
      expect(() => spawnActor(system, bad, spec)).toThrow(InvalidActorNameError);
      expect(() => child(system, bad, spec)).toThrow(bad ? JSON.stringify(bad) : /""/);
    }
    const parent = spawnActor(system, 'board-1', spec);
    expect(() => child(parent, 'lane:1', spec)).toThrow(/invalid actor name "lane:1"/);
    expect(child(parent, 'lane_1.a-B', spec).path).toBe('board-1/lane_1.a-B');
    // nact makes timeouts int32, so 3e9 would fire at once: refused, as is 0 (nact reads it as "never").
    for (const passivateAfterMs of [0, 3e9]) {
      expect(() => spawnActor(system, 'idle', { ...spec, passivateAfterMs })).toThrow(RangeError);
    }
  });

  it('keeps serving when the error hook itself throws', async () => {
    const sys = startActorSystem({
      onError: () => {
        throw new Error('logger down');
      },
    });
    try {
      const ref = spawnActor(sys, 'run-l', counter().spec);
      dispatch(ref, { type: 'boom' });
      dispatch(ref, { type: 'add', n: 2 });
      expect(await get(ref)).toBe(2);
    } finally {
      stopSystem(sys);
    }
  });

  it('child() gets a live actor, spawnActor() refuses a duplicate', async () => {
    start();
    const c = counter();
    const a = child(system, 'session-1', c.spec);
    expect(child(system, 'session-1', c.spec)).toBe(a);
    expect(() => spawnActor(system, 'session-1', c.spec)).toThrow(/"session-1" already exists/);
  });

  it('passivates an idle actor and rehydrates it on the next message or lookup', async () => {
    start();
    const c = counter({ passivateAfterMs: 20 });
    const ref = child(system, 'run-p', c.spec);
    dispatch(ref, { type: 'add', n: 3 });
    expect(await get(ref)).toBe(3);
    await passivated(ref);
    expect(c.stats.hydrations).toBe(1);
    expect(dispatch(ref, { type: 'add', n: 4 })).toBe(true); // the old ref revives the actor
    expect(await get(ref)).toBe(7);
    expect(c.stats.hydrations).toBe(2);
    await passivated(ref);
    expect(child(system, 'run-p', c.spec)).toBe(ref); // lookup after passivation: same ref, fresh state
    expect(await get(ref)).toBe(7);
    expect(c.stats.hydrations).toBe(3);
  });

  it('revives a passivated parent when a message reaches its child', async () => {
    start();
    const board = counter({ passivateAfterMs: 20 });
    const lane = counter();
    const parent = spawnActor(system, 'board-2', board.spec);
    const kid = spawnActor(parent, 'lane-2', lane.spec);
    dispatch(kid, { type: 'add', n: 2 });
    expect(await get(kid)).toBe(2);
    await passivated(parent); // the board passivates, and nact stops its children with it
    await passivated(kid);
    expect(await get(kid)).toBe(2);
    expect(lane.stats.hydrations).toBe(2);
  });

  it('stop() ends an actor and its children for good; the name can be spawned afresh', async () => {
    start();
    const c = counter();
    const parent = spawnActor(system, 'run-s', c.spec);
    const kid = spawnActor(parent, 'turn-1', counter().spec);
    stop(parent);
    expect(dispatch(parent, { type: 'add', n: 1 })).toBe(false);
    expect(dispatch(kid, { type: 'add', n: 1 })).toBe(false);
    await expect(get(parent)).rejects.toThrow(ActorStoppedError);
    await expect(get(kid)).rejects.toThrow(/"run-s\/turn-1": the actor is stopped/);
    expect(() => spawnActor(parent, 'turn-2', c.spec)).toThrow(/parent "run-s" is stopped/);

    const again = spawnActor(system, 'run-s', c.spec);
    expect(again).not.toBe(parent);
    expect(dispatch(parent, { type: 'add', n: 1 })).toBe(false); // the old ref does not reach the new actor
    expect(await get(again)).toBe(0);
  });

  it('stopSystem() stops everything', async () => {
    start();
    const ref = spawnActor(system, 'run-x', counter().spec);
    stopSystem(system);
    expect(dispatch(ref, { type: 'ignore' })).toBe(false);
    expect(() => spawnActor(system, 'run-y', counter().spec)).toThrow(/is stopped/);
  });
});

describe('actors/runtime on the clock it is given', () => {
  /** Until the one timer left is the idle timer, armed once the mailbox emptied (the queries' timers cancelled by their replies). */
  const idleArmed = (clock: FakeClock, n = 1) => vi.waitFor(() => expect(clock.pendingTimers()).toBe(n), { timeout: 5_000, interval: 5 });
  /** A few turns of the event loop: what a settled promise would have done by now, it has. */
  const turns = async () => {
    for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
  };

  it('given an idle actor, when its clock passes passivateAfterMs, then it is asleep at once and the next message wakes it', async () => {
    const clock = new FakeClock();
    start(clock);
    const c = counter({ passivateAfterMs: 1_000 });
    const ref = child(system, 'run-c', c.spec);
    dispatch(ref, { type: 'add', n: 3 });
    expect(await get(ref)).toBe(3);
    await idleArmed(clock);
    clock.advance(999);
    expect(isAwake(ref)).toBe(true);
    clock.advance(1);
    expect(isAwake(ref)).toBe(false);
    expect(await get(ref)).toBe(3);
    expect(c.stats.hydrations).toBe(2);
    await idleArmed(clock);
    stopSystem(system);
    expect(clock.pendingTimers()).toBe(0); // a stopped system leaves no timer behind
  });

  it('given a query nobody answers, when its clock passes the timeout, then it is rejected then and not before', async () => {
    const clock = new FakeClock();
    start(clock);
    const ref = spawnActor(system, 'lane-c', counter().spec);
    let settled = false;
    const silent = query(ref, () => ({ type: 'ignore' }), 10_000);
    silent.then(
      () => {},
      () => {
        settled = true;
      },
    );
    expect(await get(ref)).toBe(0); // the ignored message was handled before this one
    clock.advance(9_999);
    await turns();
    expect(settled).toBe(false);
    clock.advance(1);
    await turns();
    expect(settled).toBe(true);
    await expect(silent).rejects.toThrow(/"lane-c" timed out after 10000 ms/);
    expect(() => reply({} as ReplyTo<number>, 1)).toThrow(TypeError); // not an asker of this door
  });

  it('given queries waiting behind a message in hand, when the actor, its parent or the system stops, then the waiting ones fail at once as never taken, and the one in hand still answers', async () => {
    const clock = new FakeClock();
    start(clock);
    // A 'hold' is in hand until its gate opens.
    let release = () => {};
    let gate = new Promise<void>((r) => {
      release = r;
    });
    type Msg = { type: 'hold'; replyTo: ReplyTo<string> } | { type: 'get'; replyTo: ReplyTo<string> };
    const spec: ActorSpec<null, Msg> = {
      hydrate: () => null,
      receive: async (state, msg) => {
        if (msg.type === 'hold') await gate;
        reply(msg.replyTo, msg.type);
        return state;
      },
    };
    const outcome = (p: Promise<string>) =>
      p.then(
        (value) => value,
        (error: unknown) => (error instanceof ActorStoppedError ? `stopped: ${messageOf(error)}` : `other: ${messageOf(error)}`),
      );
    const parent = spawnActor(system, 'board', spec);
    const kid = spawnActor(parent, 'lane-k', spec);
    const other = spawnActor(system, 'run-o', spec);
    const inHand = outcome(query(parent, (replyTo) => ({ type: 'hold', replyTo }), 30_000));
    const kidInHand = outcome(query(kid, (replyTo) => ({ type: 'hold', replyTo }), 30_000));
    await turns(); // both taken their 'hold'
    const waiting = outcome(query(parent, (replyTo) => ({ type: 'get', replyTo }), 30_000));
    const kidWaiting = outcome(query(kid, (replyTo) => ({ type: 'get', replyTo }), 30_000));
    const otherWaiting = outcome(query(other, (replyTo) => ({ type: 'get', replyTo }), 30_000));

    stop(parent);
    await turns();
    // No clock moved: what waited in the stopped mailboxes (the parent's and its child's) is told now.
    expect(await waiting).toBe('stopped: query to actor "board": the actor stopped before it took the message');
    expect(await kidWaiting).toBe('stopped: query to actor "board/lane-k": the actor stopped before it took the message');
    release();
    // A message in hand is its receive's to answer (it may have committed before the stop): it does.
    expect(await inHand).toBe('hold');
    expect(await kidInHand).toBe('hold');
    expect(await otherWaiting).toBe('get'); // untouched by another actor's stop

    gate = new Promise<void>((r) => {
      release = r;
    });
    let settled = false;
    const late = outcome(query(other, (replyTo) => ({ type: 'hold', replyTo }), 30_000)).finally(() => {
      settled = true;
    });
    await turns();
    const afterIt = outcome(query(other, (replyTo) => ({ type: 'get', replyTo }), 30_000));
    stopSystem(system);
    expect(await afterIt).toBe('stopped: query to actor "run-o": the actor stopped before it took the message');
    await turns();
    expect(settled).toBe(false); // the one in hand: its receive's to answer, or its timeout's
    release();
    expect(await late).toBe('hold');
  });

  it("given a parent, when it passivates or resets, then its children are known asleep (the door's own record, not nact's)", async () => {
    const clock = new FakeClock();
    start(clock);
    const parent = spawnActor(system, 'board-c', counter({ passivateAfterMs: 1_000 }).spec);
    const kid = spawnActor(parent, 'lane-c', counter().spec);
    expect(await get(kid)).toBe(0);
    await idleArmed(clock);
    clock.advance(1_000);
    expect([isAwake(parent), isAwake(kid)]).toEqual([false, false]);
    expect(await get(kid)).toBe(0); // the message wakes the kid, and its parent first
    expect([isAwake(parent), isAwake(kid)]).toEqual([true, true]);
    dispatch(parent, { type: 'boom' });
    await vi.waitFor(() => expect(isAwake(kid)).toBe(false), { timeout: 5_000, interval: 5 });
    expect(isAwake(parent)).toBe(true);
    expect(await get(kid)).toBe(0);
    expect(reports.map((r) => [r.actor, r.decision])).toEqual([['board-c', 'reset']]);
  });

  it('given a child stopped with its passivating parent in the middle of a message, when that message crashes after the child was revived, then its decision does not stop the new incarnation', async () => {
    const clock = new FakeClock();
    start(clock);
    const parent = spawnActor(system, 'board-s', counter({ passivateAfterMs: 1_000 }).spec);
    let started = false;
    let fail: (e: Error) => void = () => {};
    const slow = new Promise<never>((_, reject) => {
      fail = reject;
    });
    type Msg = { type: 'slow' } | { type: 'ping'; replyTo: ReplyTo<string> };
    const kid = spawnActor<null, Msg>(parent, 'lane-s', {
      hydrate: () => null,
      receive: async (state, msg) => {
        if (msg.type === 'ping') reply(msg.replyTo, 'pong');
        else {
          started = true;
          await slow;
        }
        return state;
      },
      onCrash: () => 'stop',
    });
    const ping = () => query(kid, (replyTo) => ({ type: 'ping', replyTo }), 1_000);
    dispatch(kid, { type: 'slow' });
    await vi.waitFor(() => expect(started).toBe(true), { timeout: 5_000, interval: 5 });
    clock.advance(1_000); // the parent, idle since its spawn, passivates: its kid stops with it, mid-message
    expect(isAwake(kid)).toBe(false);
    expect(await ping()).toBe('pong'); // revived, parent first
    fail(new Error('late'));
    await vi.waitFor(() => expect(reports).toHaveLength(1), { timeout: 5_000, interval: 5 });
    expect(reports[0]).toMatchObject({ actor: 'board-s/lane-s', decision: 'stop' });
    expect(await ping()).toBe('pong');
  });

  it('reaches nact through its public API only, and only from this door', () => {
    const root = join(import.meta.dirname, '../..');
    const sources = (dir: string): string[] =>
      readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
        .filter((e) => e.isFile() && e.name.endsWith('.ts'))
        .map((e) => join(e.parentPath, e.name));
    const nactUsers = ['actors', 'adapters', 'apps', 'bench', 'cli', 'events', 'projections', 'replay', 'runtime', 'scripts', 'sim', 'web']
      .flatMap(sources)
      .filter((file) => /require\('nact|from 'nact/.test(readFileSync(file, 'utf8')))
      .map((file) => file.slice(root.length + 1));
    expect(nactUsers).toEqual(['runtime/actors/runtime.ts']);
    expect(readFileSync(join(root, 'runtime/actors/runtime.ts'), 'utf8')).not.toMatch(/nact\/lib/);
  });
});
