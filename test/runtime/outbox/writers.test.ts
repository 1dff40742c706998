import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { writerOf } from '../../../actors/writer.ts';
import { counterEventOf } from '../../fixtures/counter/counterEvents.ts';
import { bumped, milestone } from '../../support/events.ts';
import { stampedAt } from '../../support/stampedAt.ts';
import { tempDbPath } from '../../support/tempStore.ts';

/** This machine's host name, as the tests below set it: host names may hold colons. */
const host = vi.hoisted(() => ({ name: 'a:b' }));

/**
 * The modules that read the host name, loaded afresh on a `node:os` whose hostname is `host.name`; the
 * worker's later files get the real one (the swap is undone and its copies dropped after this file).
 */
let m: {
  Outbox: typeof import('../../../runtime/actors/outbox.ts').Outbox;
  writerIsAlive: typeof import('../../../runtime/actors/processes.ts').writerIsAlive;
  writerIsGone: typeof import('../../../runtime/actors/processes.ts').writerIsGone;
  PROCESS_INCARNATION: string;
  sharedLogWriter: () => string;
  openCounterStore: typeof import('../../fixtures/counter/counterStore.ts').openCounterStore;
};
beforeAll(async () => {
  vi.resetModules();
  vi.doMock('node:os', async (original) => ({ ...(await original<typeof import('node:os')>()), hostname: () => host.name }));
  const { Outbox } = await import('../../../runtime/actors/outbox.ts');
  const { writerIsAlive, writerIsGone } = await import('../../../runtime/actors/processes.ts');
  const { PROCESS_INCARNATION, sharedLogWriter } = await import('../../../runtime/store/processWriter.ts');
  const { openCounterStore } = await import('../../fixtures/counter/counterStore.ts');
  m = { Outbox, writerIsAlive, writerIsGone, PROCESS_INCARNATION, sharedLogWriter, openCounterStore };
});
afterAll(() => {
  vi.doUnmock('node:os');
  vi.resetModules();
});

/** A log with one milestone (an effect, seq 2), taken by `taker` and never recorded; returns the store that opens it. */
async function takenBy(taker: string) {
  const path = tempDbPath();
  const store = await m.openCounterStore(path);
  const other = await m.openCounterStore(path, { writer: taker });
  await store.append({ expected: { 'counter:a': 'any' }, events: [bumped('counter:a', 1), milestone('counter:a', 1)] });
  await other.append({
    expected: { 'outbox:announce': 0 },
    events: [{ stream: 'outbox:announce', type: 'outbox.taken', data: { through: 2, effects: [2] }, at: 1 }],
  });
  const performed: number[] = [];
  const outbox = new m.Outbox(
    store,
    {
      name: 'announce',
      delivery: 'at-most-once',
      effectOf: (event) => (counterEventOf(event)?.type === 'counter.milestone.reached' ? event.seq : null),
      async perform(seq) {
        performed.push(seq);
        return { ok: true };
      },
    },
    stampedAt(1),
  );
  await outbox.open();
  return { types: (await store.readStream('outbox:announce')).map((e) => e.type), performed };
}

describe('a writer `host:pid` whose host name holds colons', () => {
  it('given this host is "a:b" and a take by a:b:PID whose process is alive, when the outbox opens, then the take is left to its taker', async () => {
    host.name = 'a:b';
    // The parent (the test runner): alive, and not this process, whose own earlier lives would share its host:pid.
    const { types, performed } = await takenBy(`a:b:${process.ppid}`);
    expect(types).toEqual(['outbox.taken']);
    expect(performed).toEqual([]);
  });

  it('given this host is "a:b" and a take by a:b:PID whose process is gone, when the outbox opens, then it is recorded interrupted', async () => {
    host.name = 'a:b';
    const { types, performed } = await takenBy('a:b:999999');
    expect(types).toEqual(['outbox.taken', 'outbox.interrupted']);
    expect(performed).toEqual([]);
  });

  it('given this host is "a:b" and a take by a former life of this process (a:b#LIFE:PID, the same pid: a container restarted), when the outbox opens, then it is recorded interrupted; by this life, left', async () => {
    host.name = 'a:b';
    const former = await takenBy(`a:b#0ld11fe:${process.pid}`);
    expect(former.types).toEqual(['outbox.taken', 'outbox.interrupted']);
    expect((await takenBy(`a:b#${m.PROCESS_INCARNATION}:${process.pid}`)).types).toEqual(['outbox.taken']);
  });

  it('given this host is "a" and a take by a:b:PID (another host, whose pid means nothing here), when the outbox opens, then the take is left to its taker', async () => {
    host.name = 'a';
    const { types } = await takenBy(`a:b:${process.pid}`);
    expect(types).toEqual(['outbox.taken']);
  });
});

describe('writerOf and writerIsGone', () => {
  it('given host:pid with colons in the host, then the pid is what follows the last colon, and what is no pid is null', () => {
    expect(writerOf('a:b:42')).toEqual({ host: 'a:b', pid: 42 });
    expect(writerOf('::1:42')).toEqual({ host: '::1', pid: 42 });
    expect(writerOf('h:0')).toEqual({ host: 'h', pid: null });
    expect(writerOf('h:x')).toEqual({ host: 'h', pid: null });
    expect(writerOf('h')).toEqual({ host: 'h', pid: null });
    expect(writerOf('a:b#3f9c:42')).toEqual({ host: 'a:b', pid: 42, incarnation: '3f9c' });
  });

  it('given a writer of this host naming this process’s pid in another life (a container restarted as pid 1), then it is gone; in this life, alive', () => {
    host.name = 'a:b';
    expect(m.writerIsGone(writerOf(`a:b#0ld11fe:${process.pid}`))).toBe(true);
    expect(m.writerIsAlive(writerOf(`a:b#${m.PROCESS_INCARNATION}:${process.pid}`))).toBe(true);
    expect(m.writerIsAlive(writerOf(m.sharedLogWriter()))).toBe(true);
    expect(m.writerIsAlive(writerOf(`c#${m.PROCESS_INCARNATION}:${process.pid}`))).toBeNull();
  });

  it("given writers of this host and of another, then only this host's are probed", () => {
    host.name = 'a:b';
    expect(m.writerIsAlive(writerOf(`a:b:${process.pid}`))).toBe(true);
    expect(m.writerIsGone(writerOf(`a:b:${process.pid}`))).toBe(false);
    expect(m.writerIsGone(writerOf('a:b:999999'))).toBe(true);
    expect(m.writerIsGone(writerOf('a:b:x'))).toBe(true);
    expect(m.writerIsAlive(writerOf(`a:${process.pid}`))).toBeNull();
    expect(m.writerIsGone(writerOf('a:999999'))).toBe(false);
  });
});
