import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { heardOf } from '../../../actors/board/inbox/noticeKinds.ts';
import { openSubscription } from '../../../apps/board/chores/notices/subscriptions.ts';
import type { DomainEvent } from '../../../events/catalog.ts';
import { FakeClock } from '../../../runtime/actors/clock.ts';
import { rebuildProjections } from '../../../runtime/folds/keeper/rebuild.ts';
import { projections } from '../../../runtime/folds/keeper/registry.ts';
import { announceSession } from '../../fixtures/hooks/boardLog.ts';
import { startChild } from '../../support/processes.ts';
import { openTempStore, tempDir } from '../../support/tempStore.ts';

const LANES = ['L0', 'L1', 'L2'];
const lines = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);

describe('two board processes on one file', () => {
  it('given two processes running rounds at once over many rounds, then every hook ran once, every notice was filed once, every adoption was acted on once', async () => {
    const dir = tempDir();
    const db = join(dir, 'runledger.db');
    const hooksFile = join(dir, 'hooks.log');
    const bindsFile = join(dir, 'binds.log');
    const store = await openTempStore(db);
    const clock = new FakeClock();
    // Sessions S0..S2 are live (their agents announced them); each hears some lane's runs, S0 every lane's.
    for (const [i, session] of ['S0', 'S1', 'S2'].entries()) await announceSession(store, 'c1', `seed${i}`, session);
    const subscriptions = [
      { ...(await openSubscription(store, clock, { sessionId: 'S0', kinds: ['run.ended'] })), sessionId: 'S0', lane: null },
      {
        ...(await openSubscription(store, clock, { sessionId: 'S1', lane: 'L1', kinds: ['run.claimed', 'run.ended'] })),
        sessionId: 'S1',
        lane: 'L1',
      },
      { ...(await openSubscription(store, clock, { sessionId: 'S2', lane: 'L2', kinds: ['run.started'] })), sessionId: 'S2', lane: 'L2' },
    ];
    // The hook says which process ran it ($PPID: its shell's parent) and what it was given.
    const hook = `printf '%s %s\\n' "$PPID" "$(cat)" >> '${hooksFile}'`;
    const hooks = { on_run_claimed: hook, on_run_started: hook, on_run_ended: hook, on_tick: hook };
    const config = (name: string) =>
      JSON.stringify({
        name,
        hooks,
        lanes: LANES,
        listed: { A1: 'c1', A2: 'c2' },
        bindsFile,
        generateMs: 2_000,
        generateRounds: 24,
        runForMs: 3_000,
        minRounds: 30,
        adoptEvery: 4,
      });

    const boards = [startChild('hooks/rounds.ts', [db, config('p')]), startChild('hooks/rounds.ts', [db, config('q')])];
    await Promise.all(boards.map((b) => b.waitForLine((line) => line === 'ready')));
    const exits = await Promise.all(boards.map((b) => b.waitForExit(15_000)));
    expect(
      exits.map((e) => e.code),
      boards.map((b) => b.errors()).join('\n'),
    ).toEqual([0, 0]);
    const rounds = boards.map((b) =>
      Number(
        b
          .output()
          .find((l) => l.startsWith('done '))!
          .slice(5),
      ),
    );
    expect(Math.min(...rounds)).toBeGreaterThan(20);

    const log = await store.readAll(0, 1_000_000);
    const ofType = <T extends DomainEvent['type']>(type: T) => log.filter((e): e is Extract<DomainEvent, { type: T }> => e.type === type);

    // Hooks: one line per hook event of the log, none twice, none missed, none interrupted.
    const ran = lines(hooksFile).map((line) => {
      const payload = JSON.parse(line.slice(line.indexOf(' ') + 1)) as { hook: string; run_id?: string; at: number };
      return { pid: line.slice(0, line.indexOf(' ')), key: `${payload.hook} ${payload.run_id ?? payload.at}` };
    });
    const wanted = [
      ...ofType('board.run.claimed').map((e) => `on_run_claimed ${e.data.runId}`),
      ...ofType('board.run.running').map((e) => `on_run_started ${e.data.runId}`),
      ...ofType('board.run.finished').map((e) => `on_run_ended ${e.data.runId}`),
    ];
    const ticks = ofType('hook.tick.due').length;
    expect(
      ran
        .filter((r) => !r.key.startsWith('on_tick'))
        .map((r) => r.key)
        .sort(),
    ).toEqual(wanted.sort());
    expect(ran.filter((r) => r.key.startsWith('on_tick'))).toHaveLength(ticks);
    expect(ofType('hook.exited')).toHaveLength(wanted.length + ticks);
    expect(ofType('hook.exited').every((e) => e.data.ok)).toBe(true);
    expect(ofType('hook.interrupted')).toEqual([]);
    expect(new Set(ran.map((r) => r.pid)).size).toBe(2);

    // Notices: each subscription got each event it hears exactly once, in the order of the log.
    const lanes: Record<string, string> = {};
    for (const e of ofType('board.run.queued')) lanes[e.data.runId] = e.data.lane;
    for (const sub of subscriptions) {
      const kinds = sub.sessionId === 'S0' ? ['run.ended'] : sub.sessionId === 'S1' ? ['run.claimed', 'run.ended'] : ['run.started'];
      const heard = log
        .filter((e) => e.seq > sub.from)
        .map((e) => heardOf(e, { runLanes: lanes, sessionLanes: {} }))
        .filter((h) => h !== null && kinds.includes(h.kind) && (sub.lane === null || h.lane === sub.lane))
        .map((h) => h!.source);
      const filed = ofType('notice.filed').filter((e) => e.data.subscriptionId === sub.subscriptionId);
      expect(heard.length).toBeGreaterThan(5);
      expect(filed.map((e) => e.data.source)).toEqual(heard);
      expect(filed.map((e) => e.data.n)).toEqual([...filed.map((e) => e.data.n)].sort((a, b) => a - b));
    }
    expect(new Set(ofType('notice.filed').map((e) => e.actor)).size).toBe(2);

    // Adoptions: each request claimed once, bound once (the outside write), adopted once.
    const requested = ofType('adoption.requested')
      .map((e) => e.data.lane)
      .sort();
    expect(requested.length).toBeGreaterThan(10);
    expect(
      ofType('adoption.claimed')
        .map((e) => e.data.lane)
        .sort(),
    ).toEqual(requested);
    expect(
      ofType('adoption.adopted')
        .map((e) => e.data.lane)
        .sort(),
    ).toEqual(requested);
    const binds = lines(bindsFile).map((line) => line.split(' '));
    expect(binds.map(([lane]) => lane).sort()).toEqual(requested);
    expect(new Set(binds.map(([, , pid]) => pid)).size).toBe(2);

    // Every projection (the cursors, the notices and adoptions indexes among them) rebuilds equal from seq 0.
    expect((await rebuildProjections(store, projections)).filter((r) => !r.equal)).toEqual([]);
  });
});
