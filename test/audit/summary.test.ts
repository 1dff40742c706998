import { describe, expect, it } from 'vitest';
import type { NewDomainEvent } from '../../events/catalog.ts';
import { type AuditSummary, auditSummaryProjection } from '../../projections/audit/summary.ts';
import { formatSummary, type SummaryReport, summaryReport } from '../../projections/audit/summaryView.ts';
import type { AnyProjection } from '../../projections/projection.ts';
import { hydrateProjections, saveCheckpoints } from '../../runtime/folds/hydrate.ts';
import { appendOrThrow } from '../../runtime/store/eventStore.ts';
import { openScenario, scenarioCopy } from '../replay/scenarioLog.ts';
import { runInProcess } from '../support/inProcessCli.ts';
import { runledger } from '../support/processes.ts';
import { openTempStore } from '../support/tempStore.ts';

const projection = auditSummaryProjection as AnyProjection;

async function summaryOf(path = scenarioCopy()): Promise<SummaryReport> {
  const store = await openScenario(path);
  try {
    const folded = (await hydrateProjections(store, [projection])).get(projection.name)!;
    return summaryReport(folded.state as AuditSummary, folded.seq);
  } finally {
    await store.close();
  }
}

describe('audit summary of the recorded scenario', () => {
  it('counts runs by outcome on the board and on each computer, with the reasons', async () => {
    const report = await summaryOf();

    expect(report.seq).toBe(182);
    expect(report.board).toMatchObject({ submitted: 6, deduplicated: 0, open: 0, outcomes: { succeeded: 2, failed: 1, cancelled: 2, resolved: 1 } });
    expect(report.board.refused).toEqual({ claimed_elsewhere: 2, conversation_busy: 1 });
    expect(report.computers).toMatchObject({ queued: 8, parks: 1, claimsRetried: 1 });
    expect(report.computers.outcomes).toEqual({
      ended: {
        count: 5,
        reasons: { finished: 2, 'failed: the agent exited with code 1': 1, 'failed: cancelled_by_user': 1, 'failed: resolved on the board': 1 },
      },
      skipped: { count: 2, reasons: { 'skipped: another computer has it': 2 } },
      withdrawn: { count: 1, reasons: { 'withdrawn: cancelled on the board before it was claimed': 1 } },
    });
    expect(report.computers.byComputer).toEqual({ c1: { ended: 4, skipped: 1, withdrawn: 1 }, c2: { ended: 1, skipped: 1, withdrawn: 0 } });
  });

  it('adds up the time runs spent queued and parked per lane, from run.queued, run.claim.started, run.parked and run.unparked', async () => {
    const report = await summaryOf();
    const lanes = Object.fromEntries(report.lanes.map(({ lane, ...times }) => [lane, times]));

    // A: r2 waited for r1's turn from 00:10.1 to 00:40.1. B: r4 parked from 00:52.1 until resent at 01:11.
    // D: r7's claim retry waited 2.1 s. E: r8 queued 10 s while the scheduler was held, then withdrawn.
    expect(lanes).toEqual({
      A: { runs: 3, queuedMs: 30_000, parkedMs: 0, parks: 0, claimRetries: 0, stillWaiting: 0 },
      B: { runs: 3, queuedMs: 0, parkedMs: 18_900, parks: 1, claimRetries: 0, stillWaiting: 0 },
      D: { runs: 1, queuedMs: 2_100, parkedMs: 0, parks: 0, claimRetries: 1, stillWaiting: 0 },
      E: { runs: 1, queuedMs: 10_000, parkedMs: 0, parks: 0, claimRetries: 0, stillWaiting: 0 },
    });
    expect(report.lanes.map((l) => l.lane)).toEqual(['A', 'B', 'E', 'D']);
  });

  it('is a projection: from a checkpoint and the tail past it, the same as a fold from seq 0', async () => {
    const path = scenarioCopy();
    const store = await openScenario(path);
    const log = await store.readAll(0, 1000);
    const half = log.slice(0, 100).reduce((s, e) => auditSummaryProjection.evolve(s, e), auditSummaryProjection.initial());
    await saveCheckpoints(store, [{ projection, state: half, seq: 100 }]);
    await store.close();

    const fromCheckpoint = await summaryOf(path);
    const whole = summaryReport(
      log.reduce((s, e) => auditSummaryProjection.evolve(s, e), auditSummaryProjection.initial()),
      log.length,
    );

    expect(fromCheckpoint).toEqual(whole);
  });

  it('counts a run still waiting up to the last event', async () => {
    const path = scenarioCopy();
    const store = await openScenario(path);
    const log = await store.readAll(0, 1000);
    const queued = log.find((e) => e.type === 'run.queued' && (e.data as { runId: string }).runId === 'r8')!;
    const state = log.filter((e) => e.seq <= queued.seq + 2).reduce((s, e) => auditSummaryProjection.evolve(s, e), auditSummaryProjection.initial());
    await store.close();

    const lane = summaryReport(state, queued.seq + 2).lanes.find((l) => l.lane === 'E')!;

    // Still queued at the board's cancel, 9.9 s later: counted up to the last event's time.
    expect(lane).toMatchObject({ stillWaiting: 1, queuedMs: 9_900 });
  });
});

describe('audit summary: session closes, hooks and notices', () => {
  it('counts closes deferred (by reason) and failed, hooks delivered and failed, notices filed', async () => {
    const store = await openTempStore();
    const at = Date.UTC(2026, 0, 1);
    const events: NewDomainEvent[] = [
      { stream: 'c1/session:s1', type: 'session.close.intended', data: { sessionId: 's1', runId: 'r1', reason: 'its run ended' }, at },
      {
        stream: 'c1/session:s1',
        type: 'session.close.deferred',
        data: { sessionId: 's1', attempt: 1, reason: 'a turn is in progress (working)', unread: null },
        at,
      },
      {
        stream: 'c1/session:s1',
        type: 'session.close.deferred',
        data: { sessionId: 's1', attempt: 2, reason: 'a turn is in progress (working)', unread: null },
        at,
      },
      { stream: 'c1/session:s1', type: 'session.closed', data: { sessionId: 's1', attempt: 3, reason: 'idle' }, at },
      { stream: 'c1/session:s2', type: 'session.close.incident', data: { sessionId: 's2', attempt: 1, reason: 'the pane could not be killed' }, at },
      ...[true, false, true].map(
        (ok, i): NewDomainEvent => ({
          stream: 'outbox:hooks',
          type: 'hook.exited',
          data: {
            effect: i + 1,
            hook: 'on_run_ended',
            runId: 'r1',
            ok,
            exitCode: ok ? 0 : 1,
            signal: null,
            error: null,
            outputTail: '',
            durationMs: 5,
          },
          at,
        }),
      ),
    ];
    for (const event of events) await appendOrThrow(store, { expected: { [event.stream]: 'any' }, events: [event] });

    const folded = (await hydrateProjections(store, [projection])).get(projection.name)!;
    const report = summaryReport(folded.state as AuditSummary, folded.seq);

    expect(report.sessions).toEqual({
      intended: 1,
      closed: 1,
      closesDeferred: { count: 2, reasons: { 'a turn is in progress (working)': 2 } },
      closesFailed: { count: 1, reasons: { 'the pane could not be killed': 1 } },
    });
    expect(report.hooks).toEqual({ delivered: 2, failed: 1, interrupted: 0, byHook: { on_run_ended: { delivered: 2, failed: 1 } } });
    const text = formatSummary(report);
    expect(text).toContain('session closes: 1 intended, 1 closed, 2 deferral(s), 1 failed for good');
    expect(text).toMatch(/^ {2}deferred 2 {2}a turn is in progress \(working\)$/m);
    expect(text).toContain('hooks: 2 delivered, 1 failed, 0 cut by a crash (on_run_ended 2/3)');
  });
});

describe('runledger audit with no id', () => {
  it('prints the summary, as lines or as JSON; an id and --summary together are refused', async () => {
    const path = scenarioCopy();
    // The lines through the real entry point; the JSON and the refusal in this process, through the same dispatch.
    const human = runledger(['audit', '--db', path]);
    const json = await runInProcess(['audit', '--summary', '--db', path, '--json']);
    const both = await runInProcess(['audit', 'r1', '--summary', '--db', path]);

    expect(human.status).toBe(0);
    expect(human.stdout).toContain('board: 6 run(s) submitted');
    expect(human.stdout).toContain('  succeeded 2 · failed 1 · cancelled 2 · resolved 1 · not yet terminal 0');
    expect(human.stdout).toContain('computers: 8 run(s) queued, 1 park(s), 1 claim(s) retried');
    expect(human.stdout).toMatch(/^ {9}2 {2}skipped: another computer has it$/m);
    expect(human.stdout).toContain(
      [
        '  lane    runs        queued        parked  parks  retries  waiting',
        '  A          3          30 s         0.0 s      0        0  0',
        '  B          3         0.0 s          19 s      1        0  0',
      ].join('\n'),
    );
    expect(human.stdout).toContain('session closes: 0 intended, 0 closed, 0 deferral(s), 0 failed for good');
    expect(json.status).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ seq: 182, board: { outcomes: { succeeded: 2 } }, computers: { claimsRetried: 1 } });
    expect(both.status).not.toBe(0);
    expect(both.stderr).toContain('give a run or session id, or --summary, not both');
  });
});
