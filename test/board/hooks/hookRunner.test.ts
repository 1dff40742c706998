import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { HookCommands } from '../../../apps/board/chores/hooks/hookNames.ts';
import { HOOKS_STREAM, HookRunner } from '../../../apps/board/chores/hooks/hookRunner.ts';
import { recordTick } from '../../../apps/board/chores/hooks/tickHook.ts';
import type { DomainEvent } from '../../../events/catalog.ts';
import { type CursorsState, cursorsProjection } from '../../../projections/cursors.ts';
import { systemClock } from '../../../runtime/actors/clock.ts';
import { hydrateProjections } from '../../../runtime/folds/hydrate.ts';
import type { EventStore } from '../../../runtime/store/eventStore.ts';
import { appendRun, closeSession } from '../../fixtures/hooks/boardLog.ts';
import { openTempStore, tempDbPath, tempDir } from '../../support/tempStore.ts';

/** A hook that appends its stdin, as one line, to `file`: each line is one run of a hook. */
const appendTo = (file: string) => `printf '%s\\n' "$(cat)" >> '${file}'`;
const lines = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);
const payloads = (file: string) => lines(file).map((line) => JSON.parse(line) as Record<string, unknown>);
const records = async (store: EventStore) =>
  (await store.readStream(HOOKS_STREAM)).filter((e): e is DomainEvent & { type: 'hook.exited' } => e.type === 'hook.exited');

async function runner(store: EventStore, commands: HookCommands, startAt?: number): Promise<HookRunner> {
  const hooks = new HookRunner({ store, clock: systemClock, commands });
  await hooks.open(startAt ?? (await store.headSeq()));
  return hooks;
}

describe('hooks run once, after the commit that took them', () => {
  it("given hooks for a run's claim, start and end, when its decisions commit, then each runs once with its JSON on stdin, and its exit is recorded", async () => {
    const store = await openTempStore();
    const file = join(tempDir(), 'hooks.log');
    const hooks = await runner(store, {
      on_run_claimed: appendTo(file),
      on_run_started: appendTo(file),
      on_run_ended: `${appendTo(file)}; echo ended fine`,
    });
    const seqs = await appendRun(store, 'r1', 'L', { at: 1_000 });

    expect(await hooks.drain()).toBe(3);
    expect(await hooks.settle()).toBe(true);
    expect(await hooks.drain()).toBe(0);

    expect(payloads(file).sort((a, b) => String(a.hook).localeCompare(String(b.hook)))).toEqual([
      { hook: 'on_run_claimed', run_id: 'r1', lane: 'L', state: 'claimed', at: 1_000 },
      { hook: 'on_run_ended', run_id: 'r1', lane: 'L', state: 'succeeded', at: 1_000 },
      { hook: 'on_run_started', run_id: 'r1', lane: 'L', state: 'running', at: 1_000 },
    ]);
    const taken = (await store.readStream(HOOKS_STREAM)).filter((e) => e.type === 'outbox.taken');
    expect(taken.map((e) => e.type === 'outbox.taken' && e.data.effects)).toEqual([[seqs.claimed, seqs.running, seqs.finished]]);
    const ended = (await records(store)).find((r) => r.data.hook === 'on_run_ended')!;
    expect(ended.data).toMatchObject({
      effect: seqs.finished,
      runId: 'r1',
      ok: true,
      exitCode: 0,
      signal: null,
      error: null,
      outputTail: 'ended fine\n',
    });
    // The hooks cursor is in the cursors projection, moved by the take.
    const cursors = (await hydrateProjections(store, [cursorsProjection])).get('cursors')!.state as CursorsState;
    expect(cursors.hooks).toBe(seqs.finished);
  });

  it('given a board started on an old log, when it opens its hooks, then nothing of the history runs, only what comes after', async () => {
    const store = await openTempStore();
    const file = join(tempDir(), 'hooks.log');
    for (let i = 0; i < 5; i++) await appendRun(store, `old${i}`, 'L');
    const hooks = await runner(store, { on_run_ended: appendTo(file) });

    expect(await hooks.drain()).toBe(0);
    await appendRun(store, 'new', 'L');
    expect(await hooks.drain()).toBe(1);
    await hooks.settle();
    expect(payloads(file).map((p) => p.run_id)).toEqual(['new']);
    // The start is an event: a restart resumes from its cursor, it does not start at the present again.
    await appendRun(store, 'while-down', 'L');
    const restarted = await runner(store, { on_run_ended: appendTo(file) });
    expect(await restarted.drain()).toBe(1);
    await restarted.settle();
    expect(payloads(file).map((p) => p.run_id)).toEqual(['new', 'while-down']);
  });

  it('given a hook that fails, then its exit code and the end of its output are recorded, and it is not run again', async () => {
    const store = await openTempStore();
    const hooks = await runner(store, { on_run_ended: `head -c 5000 /dev/zero | tr '\\0' x; echo; echo 'no webhook configured' >&2; exit 3` });
    await appendRun(store, 'r1', 'L');
    await hooks.drain();
    await hooks.settle();
    await hooks.drain();
    await hooks.settle();

    const [record, ...more] = await records(store);
    expect(more).toEqual([]);
    expect(record!.data).toMatchObject({ hook: 'on_run_ended', ok: false, exitCode: 3 });
    expect(record!.data.outputTail.length).toBeLessThanOrEqual(2_000);
    expect(record!.data.outputTail.endsWith('x\nno webhook configured\n')).toBe(true);
  });

  it('given a slow hook, when other hooks are due, then they run meanwhile: neither the round nor the other hooks wait for it', async () => {
    const store = await openTempStore();
    const dir = tempDir();
    const hooks = await runner(store, {
      on_run_claimed: `sleep 3; ${appendTo(join(dir, 'slow.log'))}`,
      on_run_ended: appendTo(join(dir, 'fast.log')),
    });
    await appendRun(store, 'r1', 'L', { until: 'claimed' });
    expect(await hooks.drain()).toBe(1);
    await appendRun(store, 'r1', 'L', { from: 'running' });
    expect(await hooks.drain()).toBe(1);
    // Both drains returned while the slow hook sleeps; the fast one ran meanwhile.
    expect(lines(join(dir, 'slow.log'))).toHaveLength(0);
    for (const deadline = Date.now() + 2_500; lines(join(dir, 'fast.log')).length === 0 && Date.now() < deadline; )
      await new Promise((r) => setTimeout(r, 20));
    expect(lines(join(dir, 'fast.log'))).toHaveLength(1);
    expect(lines(join(dir, 'slow.log'))).toHaveLength(0);
    await hooks.settle();
    expect(lines(join(dir, 'slow.log'))).toHaveLength(1);
  });

  it('given two boards on one file taking hooks at once, then each hook runs once', async () => {
    const path = tempDbPath();
    const file = join(tempDir(), 'hooks.log');
    const stores = [await openTempStore(path), await openTempStore(path)];
    const commands = { on_run_claimed: appendTo(file), on_run_ended: appendTo(file) };
    const runners = [await runner(stores[0]!, commands, 1), await runner(stores[1]!, commands, 1)];
    await appendRun(stores[0]!, 'first', 'L');
    const drains: Promise<number>[] = [];
    for (let i = 0; i < 15; i++) {
      await appendRun(stores[i % 2]!, `r${i}`, 'L');
      drains.push(runners[0]!.drain(), runners[1]!.drain());
    }
    await Promise.all(drains);
    await Promise.all(runners.map((r) => r.drain()));
    await Promise.all(runners.map((r) => r.settle()));

    const ran = payloads(file)
      .map((p) => `${p.hook} ${p.run_id}`)
      .sort();
    const expected = ['first', ...Array.from({ length: 15 }, (_, i) => `r${i}`)].flatMap((r) => [`on_run_claimed ${r}`, `on_run_ended ${r}`]).sort();
    expect(ran).toEqual(expected);
    expect((await records(stores[0]!)).length).toBe(32);
  });

  it("given an on_tick hook and an on_session_closed hook, then a round's tick and a session's close each run theirs once", async () => {
    const store = await openTempStore();
    const file = join(tempDir(), 'hooks.log');
    const commands = { on_tick: appendTo(file), on_session_closed: appendTo(file) };
    const hooks = await runner(store, commands);
    expect(await recordTick(store, systemClock, commands, { adopted: 0 })).toBe(true);
    await store.append({
      expected: { 'c1/session:S1': 'any' },
      events: [
        {
          stream: 'c1/session:S1',
          type: 'session.run.ended',
          data: { sessionId: 'S1', runId: 'r1', lane: 'L', bound: true, launchedAt: null, pid: null },
          at: 5,
        },
      ],
    });
    await closeSession(store, 'c1', 'S1', 9);
    await hooks.drain();
    await hooks.settle();

    // Hooks run side by side: started in the order of the log, they may end in any.
    const ran = payloads(file)
      .map(({ at: _, ...p }) => p)
      .sort((a, b) => String(a.hook).localeCompare(String(b.hook)));
    expect(ran).toEqual([{ hook: 'on_session_closed', lane: 'L', session_id: 'S1', state: 'closed' }, { hook: 'on_tick' }]);
    expect(await recordTick(store, systemClock, { on_run_ended: 'true' })).toBe(false);
  });
});
