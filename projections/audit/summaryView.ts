import { duration } from '../../events/durationWords.ts';
import { type AuditSummary, type LaneTimes, type Tally, waitOf } from './summary.ts';

export interface LaneReport extends LaneTimes {
  readonly lane: string;
  /** Runs of the lane still waiting at the last event; their wait so far is in the times. */
  readonly stillWaiting: number;
}

/** The audit summary as `runledger audit --summary --json` prints it. */
export interface SummaryReport {
  /** As of this seq of the log, and the time of its last counted event. */
  readonly seq: number;
  readonly lastAt: number;
  readonly board: AuditSummary['board'] & { readonly open: number };
  readonly computers: AuditSummary['computers'];
  readonly lanes: readonly LaneReport[];
  readonly sessions: AuditSummary['sessions'];
  readonly adoptions: AuditSummary['adoptions'];
  readonly hooks: AuditSummary['hooks'];
  readonly notices: AuditSummary['notices'];
}

/** The summary as of `seq`: runs still waiting count their wait up to the last event. */
export function summaryReport(summary: AuditSummary, seq: number): SummaryReport {
  const lanes = new Map<string, LaneReport & { stillWaiting: number }>();
  for (const [lane, times] of Object.entries(summary.lanes)) lanes.set(lane, { lane, ...times, stillWaiting: 0 });
  for (const run of Object.values(summary.waiting)) {
    const lane = lanes.get(run.lane);
    if (!lane) continue;
    const wait = waitOf(run, summary.lastAt);
    lane.queuedMs += wait.queuedMs;
    lane.parkedMs += wait.parkedMs;
    if (run.since !== null) lane.stillWaiting++;
  }
  const { outcomes } = summary.board;
  const terminal = outcomes.succeeded + outcomes.failed + outcomes.cancelled + outcomes.resolved;
  return {
    seq,
    lastAt: summary.lastAt,
    board: { ...summary.board, open: summary.board.submitted - terminal },
    computers: summary.computers,
    lanes: [...lanes.values()].sort((a, b) => b.queuedMs + b.parkedMs - (a.queuedMs + a.parkedMs) || a.lane.localeCompare(b.lane)),
    sessions: summary.sessions,
    adoptions: summary.adoptions,
    hooks: summary.hooks,
    notices: summary.notices,
  };
}

/** The lanes a person reads; `--json` has them all. */
const MAX_LANES = 20;

/** The summary as lines a person reads. */
export function formatSummary(report: SummaryReport): string {
  const { board, computers } = report;
  const lines: string[] = [];
  lines.push(
    `audit summary as of seq ${report.seq}${report.lastAt ? ` (last counted event at ${new Date(report.lastAt).toISOString().replace('T', ' ')})` : ''}`,
  );
  lines.push('');
  lines.push(`board: ${board.submitted} run(s) submitted${board.deduplicated ? `, ${board.deduplicated} resubmission(s) deduplicated` : ''}`);
  lines.push(
    `  succeeded ${board.outcomes.succeeded} · failed ${board.outcomes.failed} · cancelled ${board.outcomes.cancelled} · resolved ${board.outcomes.resolved} · not yet terminal ${board.open}`,
  );
  const refused = Object.entries(board.refused).sort((a, b) => b[1] - a[1]);
  if (refused.length) lines.push(`  requests refused: ${refused.map(([code, n]) => `${code} ${n}`).join(', ')}`);
  lines.push('');
  lines.push(`computers: ${computers.queued} run(s) queued, ${computers.parks} park(s), ${computers.claimsRetried} claim(s) retried`);
  for (const outcome of ['ended', 'skipped', 'withdrawn'] as const) lines.push(...tallyLines(outcome, computers.outcomes[outcome]));
  const byComputer = Object.entries(computers.byComputer);
  if (byComputer.length > 1) {
    for (const [computer, n] of byComputer) lines.push(`  on ${computer}: ended ${n.ended} · skipped ${n.skipped} · withdrawn ${n.withdrawn}`);
  }
  lines.push('');
  if (report.lanes.length === 0) lines.push('lanes: none queued on a computer yet');
  else {
    const shown = report.lanes.slice(0, MAX_LANES);
    lines.push(
      `lanes (time runs spent queued and parked on the computers, most first${report.lanes.length > MAX_LANES ? `, the first ${MAX_LANES} of ${report.lanes.length}` : ''}):`,
    );
    const width = Math.max(4, ...shown.map((l) => l.lane.length));
    lines.push(
      `  ${'lane'.padEnd(width)}  ${'runs'.padStart(6)}  ${'queued'.padStart(12)}  ${'parked'.padStart(12)}  ${'parks'.padStart(5)}  ${'retries'.padStart(7)}  waiting`,
    );
    for (const l of shown) {
      lines.push(
        `  ${l.lane.padEnd(width)}  ${String(l.runs).padStart(6)}  ${duration(l.queuedMs).padStart(12)}  ${duration(l.parkedMs).padStart(12)}  ${String(l.parks).padStart(5)}  ${String(l.claimRetries).padStart(7)}  ${l.stillWaiting}`,
      );
    }
    if (report.lanes.length > MAX_LANES) lines.push(`  … ${report.lanes.length - MAX_LANES} more lane(s): --json lists them all`);
  }
  const { sessions, adoptions, hooks, notices } = report;
  lines.push('');
  lines.push(
    `session closes: ${sessions.intended} intended, ${sessions.closed} closed, ${sessions.closesDeferred.count} deferral(s), ${sessions.closesFailed.count} failed for good`,
  );
  lines.push(
    ...tallyLines('deferred', sessions.closesDeferred)
      .slice(1)
      .map((l) => `  deferred ${l.trim()}`),
  );
  lines.push(
    ...tallyLines('failed', sessions.closesFailed)
      .slice(1)
      .map((l) => `  failed ${l.trim()}`),
  );
  lines.push(`adoptions: ${adoptions.requested} requested, ${adoptions.adopted} adopted, ${adoptions.failed} failed, ${adoptions.released} released`);
  const byHook = Object.entries(hooks.byHook).map(([hook, n]) => `${hook} ${n.delivered}/${n.delivered + n.failed}`);
  lines.push(
    `hooks: ${hooks.delivered} delivered, ${hooks.failed} failed, ${hooks.interrupted} cut by a crash${byHook.length ? ` (${byHook.join(', ')})` : ''}`,
  );
  lines.push(
    `notices: ${notices.filed} filed, ${notices.handed} handing(s) to agents, ${notices.waiting} wait(s) on an unreadable session, ${notices.withheld} withheld from ended sessions`,
  );
  return lines.join('\n');
}

function tallyLines(outcome: string, tally: Tally): string[] {
  const reasons = Object.entries(tally.reasons).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  return [`  ${outcome} ${tally.count}`, ...reasons.map(([reason, n]) => `    ${String(n).padStart(6)}  ${reason}`)];
}
