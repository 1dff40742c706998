import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type LocalTurnOptions, rememberedSession, startLocalTurn } from '../../apps/computer/localTurn.ts';
import { deciders } from '../../replay/deciders.ts';
import { replayLog } from '../../replay/replayLog.ts';
import { type Clock, FakeClock, systemClock } from '../../runtime/actors/clock.ts';
import type { EventStore } from '../../runtime/store/eventStore.ts';
import { claudeAgent, fixtureAgent, killEveryGroup } from '../support/computerRuns.ts';
import { openTempStore, tempDir } from '../support/tempStore.ts';

const turnIds = { next: 0 };

/** One turn of lane L as `runledger run` takes it: resuming what the log remembers for computer local. */
async function turn(store: EventStore | null, exec: string, over: Partial<LocalTurnOptions> & { clock?: Clock } = {}) {
  const laneSession = store ? await rememberedSession(store, 'local', 'L') : null;
  return startLocalTurn({
    store,
    clock: systemClock,
    computer: 'local',
    runId: `turn-${++turnIds.next}`,
    lane: 'L',
    prompt: 'what broke?',
    exec,
    workspaceRoot: tempDir(),
    budgetS: 7200,
    laneSession,
    ...over,
  });
}

describe('a local turn, as `runledger run` runs it', () => {
  it('given an agent that answers, then the reply comes back with the budget words the daemon gives, and the turn is in the log', async () => {
    const store = await openTempStore();
    const result = await (await turn(store, fixtureAgent('echo.sh'))).result;
    expect(result).toMatchObject({ ok: true, error: null });
    expect(result.reply).toMatch(/^reply to: You have about 2 hours for this turn\. .*\n\nwhat broke\?$/s);
    const types = (await store.readStream(`local/run:${result.runId}`)).map((e) => e.type);
    expect(types).toEqual(['run.handed.over', 'run.execution.requested', 'run.process.began', 'run.process.exited', 'run.settled']);
    expect(await replayLog(store, deciders)).toMatchObject({ ok: true });
  });

  it('given a session announced by one turn, then the next turn of the lane resumes it', async () => {
    const store = await openTempStore();
    const first = await (await turn(store, claudeAgent('claude-like.sh', 'known-session'))).result;
    expect(first).toMatchObject({ ok: true, laneSession: 'known-session' });
    expect(await rememberedSession(store, 'local', 'L')).toBe('known-session');

    const second = await (await turn(store, claudeAgent('claude-like.sh'))).result;
    expect(second.reply).toMatch(/^resumed: /);
    const began = (await store.readStream(`local/run:${second.runId}`)).filter((e) => e.type === 'run.process.began');
    expect(began.map((e) => e.type === 'run.process.began' && e.data.resuming)).toEqual(['known-session']);
  });

  it('given a remembered session the agent refuses, then it is forgotten and the turn runs fresh inside the same deadline', async () => {
    const store = await openTempStore();
    await store.append({
      expected: { 'local/run:turn-0': 0 },
      events: [
        {
          stream: 'local/run:turn-0',
          type: 'lane.session.remembered',
          data: { lane: 'L', sessionId: 'stale-session', runId: 'turn-0' },
          at: Date.now(),
        },
      ],
    });
    const result = await (await turn(store, claudeAgent('claude-like.sh'), { budgetS: 600 })).result;
    expect(result).toMatchObject({ ok: true, laneSession: 'fresh-session' });
    expect(result.reply).toMatch(/^fresh: You have about 10 minutes for this turn\./);
    const events = await store.readStream(`local/run:${result.runId}`);
    const deadlines = events.flatMap((e) => (e.type === 'run.execution.requested' ? [[e.data.resume, e.data.deadlineAt]] : []));
    expect(deadlines).toEqual([
      ['stale-session', deadlines[0]![1]],
      [null, deadlines[0]![1]],
    ]);
    expect(await rememberedSession(store, 'local', 'L')).toBe('fresh-session');
    // Each process is told apart for a closer look (`runledger doctor`): the refused one, then the fresh one.
    expect(result.processes.map((p) => [p.resuming, p.exit.exitCode])).toEqual([
      ['stale-session', expect.any(Number)],
      [null, 0],
    ]);
    const [refused, fresh] = await Promise.all(result.processes.map((p) => p.agent));
    expect(refused).toMatchObject({ outcome: 'exited', reply: { ok: false } });
    expect(fresh).toMatchObject({ sessionId: 'fresh-session', reply: { ok: true } });
  });

  it('given an agent that names its session and hangs, when the budget runs out, then the turn fails with the salvaged tail and the lane keeps the session', async () => {
    const store = await openTempStore();
    const clock = new FakeClock();
    const running = await turn(store, claudeAgent('hang.mjs', 'claude', 'sess-7'), { clock, budgetS: 45 });
    await waitUntil(async () => (await rememberedSession(store, 'local', 'L')) === 'sess-7');
    clock.advance(45_000);
    const result = await running.result;
    expect(result).toMatchObject({
      ok: false,
      reply: null,
      laneSession: 'sess-7',
      error: 'timed out after about 45 seconds, its budget — unfinished answer: …Half of the answer: the cause is',
    });
    expect(await rememberedSession(store, 'local', 'L')).toBe('sess-7');
  });

  it('given a stop (a signal to runledger run), then the agent is killed and the turn fails saying so', async () => {
    const store = await openTempStore();
    const marker = join(tempDir(), 'executions');
    const running = await turn(store, fixtureAgent('lingering.mjs', marker));
    await waitUntil(async () => (await store.readAll(0, 100)).some((e) => e.type === 'run.process.began'));
    running.stop();
    const result = await running.result;
    expect(result).toMatchObject({ ok: false, error: expect.stringMatching(/^killed before it finished/) });
    await killEveryGroup(store);
  });

  it('given a stop before its process began (a Ctrl-C right after the start), then the agent is killed once it began, not left to run', async () => {
    // The launcher forks the agent before this process hears its pid: a stop in between found no process
    // to kill, and `runledger run` or `doctor` waited for the agent's own end (seen: a Ctrl-C at 1 s of a
    // 30 s agent, under load, answered after 31 s).
    const store = await openTempStore();
    const marker = join(tempDir(), 'executions');
    const running = await turn(store, fixtureAgent('lingering.mjs', marker));
    running.stop();
    const result = await running.result;
    expect(result).toMatchObject({ ok: false, error: expect.stringMatching(/^killed before it finished/) });
    await killEveryGroup(store);
  });

  it('given a dry run, then the same turn runs and nothing is recorded anywhere', async () => {
    const result = await (await turn(null, claudeAgent('claude-like.sh'))).result;
    expect(result).toMatchObject({ ok: true, laneSession: 'fresh-session' });
    expect(result.reply).toMatch(/^fresh: You have about 2 hours/);
  });
});

async function waitUntil(check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`not so within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
