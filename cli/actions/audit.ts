import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { noRunStartsWith, RunIdPrefixError } from '../../projections/audit/runIdPrefix.ts';
import { type AuditSummary, auditSummaryProjection } from '../../projections/audit/summary.ts';
import { formatSummary, summaryReport } from '../../projections/audit/summaryView.ts';
import type { AnyProjection } from '../../projections/projection.ts';
import { checkEntityId, entityTimeline, formatTimeline, type Timeline } from '../../runtime/audit/runTimeline.ts';
import { hydrateProjections } from '../../runtime/folds/hydrate.ts';
import { type EntityReads, withComputerEvents } from '../../runtime/store/computerEvents.ts';
import { isPostgresUrl } from '../../runtime/store/logLocation.ts';
import { archivedSegments, describeSegment, segmentsHolding } from '../../runtime/store/retention/archivedWhere.ts';
import { NotALogError } from '../../runtime/store/sqlite/migrations.ts';
import type { AuditOptions } from '../commands/audit.ts';
import { logLocation, logName, openLogToRead } from '../shared/openLog.ts';
import { howChosen, print } from '../shared/options.ts';
import { runIdInLog } from '../shared/runIdArgument.ts';

/** `runledger audit [ID]`: a run's (or session's) timeline, or with no id the summary of the whole log. */
export async function audit(id: string | undefined, options: AuditOptions): Promise<void> {
  if (id !== undefined && options.summary) throw new Error('give a run or session id, or --summary, not both');
  if (id !== undefined) checkEntityId(id);
  // A laptop has no log: a run's timeline is the board's, read where the log is (docs/command-line.md).
  if (id !== undefined && howChosen(options) !== 'given with --db' && !isPostgresUrl(options.db) && !existsSync(logLocation(options.db)))
    return (await import('./auditFromBoard.ts')).auditFromBoard(id, options);
  const path = logName(options.db);
  const store = await openLogToRead(options).catch((error: unknown) => {
    // No log there (or none this version reads): an answer, like an unknown run's, not a crash.
    if (!(error instanceof NotALogError)) throw error;
    fail(error.message);
    return null;
  });
  if (!store) return;
  try {
    if (id === undefined) {
      // The summary is a projection: from its checkpoint (the daemon keeps one), then the tail.
      const projection = auditSummaryProjection as AnyProjection;
      const folded = (await hydrateProjections(store, [projection])).get(projection.name)!;
      const report = summaryReport(folded.state as AuditSummary, folded.seq);
      print(options, report, () => formatSummary(report));
      return;
    }
    // On a board, its computers' reported events too: the computer's half of each run, in time order.
    const timeline = await auditedTimeline(withComputerEvents(store, store.reportedEvents()), id);
    const segments = await archivedSegments(store);
    // A segment recorded, not deleted, whose file is not there: removed by hand (a SQLite log's archives only).
    const folder = store.logFile?.archiveFolder ?? null;
    const missing = (file: string) => folder !== null && !existsSync(join(folder, file));
    if (!timeline) {
      // Its history may have been in an archive retention deleted, or one removed by hand: said, with which, rather than only "no run".
      const deleted = segments.filter((s) => s.deleted || missing(s.file)).map((s) => `\n  ${describeSegment(s, missing(s.file))}`);
      const gone = deleted.length ? `; it may have been in an archive deleted since:${deleted.join('')}` : '';
      fail(`no run or session "${id}" in ${path}: the log holds no event of run:${id} or session:${id}, and ${noRunStartsWith(id)}${gone}`);
      return;
    }
    const archived = segmentsHolding(
      segments,
      timeline.entries.map((e) => e.seq),
    ).map((s) => describeSegment(s, missing(s.file)));
    print(options, archived.length ? { ...timeline, archived } : timeline, () => [formatTimeline(timeline), ...archived].join('\n'));
  } finally {
    await store.close();
  }
}

/**
 * The run `id` names (whole, or a unique prefix: docs/rules.md#tools), else the session of that whole id. A prefix
 * too short or ambiguous for a run is refused, unless it is a session's whole id.
 */
async function auditedTimeline(store: EntityReads, id: string): Promise<Timeline | null> {
  let runId: string | null;
  try {
    runId = await runIdInLog(store, id);
  } catch (error) {
    const session = error instanceof RunIdPrefixError ? await entityTimeline(store, 'session', id) : null;
    if (session) return session;
    throw error;
  }
  return (runId !== null ? await entityTimeline(store, 'run', runId) : null) ?? (await entityTimeline(store, 'session', id));
}

function fail(message: string): void {
  process.stderr.write(`runledger: ${message}\n`);
  process.exitCode = 1;
}
