import { describe, expect, it } from 'vitest';
import type { SessionCloser } from '../../apps/computer/closer/sessionCloser.ts';
import type { NewDomainEvent } from '../../events/catalog.ts';
import { wordSessionReason } from '../../events/sessionReasons.ts';
import { FakeClock } from '../../runtime/actors/clock.ts';
import { appendOrThrow, type EventStore } from '../../runtime/store/eventStore.ts';
import { runInProcess } from '../support/inProcessCli.ts';
import { runledger } from '../support/processes.ts';
import { openTempStore, tempDbPath } from '../support/tempStore.ts';
import { agentGroup, COMPUTER, closerOn, groupAlive, intend, ofType } from './sessionSupport.ts';

/** A run's stream as its actor leaves it, written straight to the log: `steps` name what happened to it. */
async function runOf(
  store: EventStore,
  runId: string,
  at: number,
  steps: { resuming?: string; announced?: string; pid?: number; exited?: boolean; settled?: boolean },
) {
  const stream = `${COMPUTER}/run:${runId}`;
  const events: NewDomainEvent[] =
    steps.pid || !steps.settled
      ? [{ stream, type: 'run.handed.over', data: { runId, lane: 'L', budgetS: 60, laneSession: steps.resuming ?? null }, at }]
      : [];
  if (steps.pid) {
    events.push({ stream, type: 'run.execution.requested', data: { runId, lane: 'L', deadlineAt: null, resume: steps.resuming ?? null }, at });
    events.push({ stream, type: 'run.process.began', data: { runId, pid: steps.pid, resuming: steps.resuming ?? null }, at });
  }
  if (steps.announced) events.push({ stream, type: 'run.session.announced', data: { runId, sessionId: steps.announced }, at });
  if (steps.exited)
    events.push({
      stream,
      type: 'run.process.exited',
      data: { runId, outcome: 'exited', exitCode: 0, signal: null, reply: 'ok', tail: '', stderrTail: '' },
      at,
    });
  if (steps.settled)
    events.push({ stream, type: 'run.settled', data: { runId, reported: true, reason: 'the board acknowledged its completion' }, at });
  await appendOrThrow(store, { expected: { [stream]: 'any' }, events });
}

const outcomesOf = async (closer: SessionCloser) => (await closer.round()).map((o) => `${o.sessionId} ${o.outcome}`);

describe('closing sessions run by --exec', () => {
  it('given a run that settled while its process group lived on, then a round stops the group and confirms the close', async () => {
    const store = await openTempStore();
    const clock = new FakeClock();
    const closer = closerOn(store, clock, { driver: 'exec', killGraceMs: 2_000 });
    await closer.open();
    const pid = agentGroup();
    await runOf(store, 'r1', clock.now(), { pid, announced: 'S1', settled: true });
    expect(await outcomesOf(closer)).toEqual(['S1 closed']);
    expect(groupAlive(pid)).toBe(false);
    const log = await store.readStream(`${COMPUTER}/session:S1`);
    expect(ofType(log, 'session.run.ended')[0]!.data).toMatchObject({ runId: 'r1', bound: true, pid });
    const kill = ofType(log, 'session.kill.requested')[0]!.data;
    expect(kill.target).toBe(`pgid:${pid}`);
    expect(wordSessionReason(kill.reason)).toContain('in no turn');
  });

  it("given the lane's next run executing in the session, then the close waits for its turn, and closes once it ended", async () => {
    const store = await openTempStore();
    const clock = new FakeClock();
    const closer = closerOn(store, clock, { driver: 'exec' });
    await closer.open();
    await runOf(store, 'r1', clock.now(), { pid: 101, announced: 'S1', exited: true, settled: true });
    await runOf(store, 'r2', clock.now(), { pid: 102, resuming: 'S1' });
    const waiting = await closer.round();
    expect(waiting.map((o) => o.outcome)).toEqual(['deferred']);
    expect(waiting[0]!.reason).toMatch(/in a turn \(working\) \(run r2 is executing in it\)/);

    clock.advance(10_000);
    await runOf(store, 'r2', clock.now(), { exited: true, settled: true });
    expect(await outcomesOf(closer)).toEqual(['S1 closed']);
    const log = await store.readStream(`${COMPUTER}/session:S1`);
    expect(ofType(log, 'session.close.intended').map((e) => e.data.runId)).toEqual(['r1', 'r2']);
    expect(ofType(log, 'session.closed')).toHaveLength(1);
  });

  it('given a run that never began a process, or whose process ended with no session, then there is nothing to close', async () => {
    const store = await openTempStore();
    const clock = new FakeClock();
    const closer = closerOn(store, clock, { driver: 'exec' });
    await closer.open();
    await runOf(store, 'r1', clock.now(), { settled: true });
    await runOf(store, 'r2', clock.now(), { pid: 103, exited: true, settled: true });
    expect(await closer.round()).toEqual([]);
    expect(ofType(await store.readAll(0, 1000), 'session.run.ended')).toHaveLength(0);
    // Nothing was taken for them either: a settled run of no session costs its outbox no record.
    expect(await store.readStream(`outbox:session-intents-${COMPUTER}`)).toEqual([]);
  });
});

describe('runledger tick and runledger audit', () => {
  it('given an open close, then `runledger tick` runs one round and exits, and `runledger audit SESSION_ID` shows each attempt, the deferral and the outcome', async () => {
    const path = tempDbPath();
    const store = await openTempStore(path);
    const closer = closerOn(store, new FakeClock(Date.now()), { driver: 'exec' });
    await closer.open();
    await runOf(store, 'r1', Date.now(), { pid: 104, announced: 'S1', exited: true, settled: true });
    await runOf(store, 'r2', Date.now(), { pid: process.pid, resuming: 'S1' });
    expect(await outcomesOf(closer)).toEqual(['S1 deferred']);
    await runOf(store, 'r2', Date.now(), { exited: true, settled: true });
    // r2's end stands with the intent already open; S1 now reads gone and is closed.
    expect(await outcomesOf(closer)).toEqual(['S1 closed']);
    await intend(closer, 'S2', 'r9');

    const tick = runledger(['tick', '--db', path, '--computer', COMPUTER, '--json']);
    expect(tick.status, tick.stderr).toBe(0);
    const report = JSON.parse(tick.stdout) as { outcomes: { sessionId: string; outcome: string }[] };
    // A process of its own, with a lock of its own: S2 was claimed by nobody, so the tick closes it.
    expect(report.outcomes.map((o) => `${o.sessionId} ${o.outcome}`)).toEqual(['S2 closed']);

    const audit = await runInProcess(['audit', 'S1', '--db', path]);
    expect(audit.status, audit.stderr).toBe(0);
    expect(audit.stdout).toMatch(/session\.close\.intended +close intended: run r1 of lane L ended/);
    expect(audit.stdout).toMatch(/session\.close\.claimed +close claimed by \S+ until/);
    expect(audit.stdout).toMatch(
      /session\.close\.deferred +close deferred \(attempt 1\): its session is in a turn \(working\) \(run r2 is executing in it\)/,
    );
    expect(audit.stdout).toMatch(/session\.closed +closed \(attempt 2\): nothing of it runs any more/);
  });
});
