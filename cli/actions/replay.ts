import { noRunStartsWith } from '../../projections/audit/runIdPrefix.ts';
import { CheckpointMismatchError } from '../../replay/checkpointStarts.ts';
import { formatEntity, formatUntil, formatVerified } from '../../replay/formatReplay.ts';
import { replayEntity } from '../../replay/replayEntity.ts';
import { replayLog } from '../../replay/replayLog.ts';
import { replayUntil } from '../../replay/replayUntil.ts';
import { checkEntityId } from '../../runtime/audit/runTimeline.ts';
import type { ReplayOptions } from '../commands/replay.ts';
import { failOnForeignRow, logName, openLogToRead } from '../shared/openLog.ts';
import { print } from '../shared/options.ts';
import { productionRegistry, type ToolRegistry } from '../shared/registry.ts';
import { runIdInLog } from '../shared/runIdArgument.ts';

/** `runledger replay`: every recorded decision re-derived from its input (or one run's, one session's, up to a seq). */
export async function replay(options: ReplayOptions, { codec, deciders, projections }: ToolRegistry = productionRegistry): Promise<void> {
  const modes = [options.until !== undefined, options.run !== undefined, options.session !== undefined].filter(Boolean).length;
  if (modes > 1) throw new Error('give one of --until, --run and --session, not several');
  const entity =
    options.run !== undefined
      ? ({ kind: 'run', id: options.run } as const)
      : options.session !== undefined
        ? ({ kind: 'session', id: options.session } as const)
        : null;
  if (entity) checkEntityId(entity.id);
  // Read-only: replay never writes the file it checks (snapshots are stored by `rebuild --write`).
  const store = await openLogToRead(options, 'fail', codec);
  try {
    const progress = await progressReporter(() => store.headSeq());
    if (entity) {
      const id = entity.kind === 'run' ? await runIdInLog(store, entity.id) : entity.id;
      const report = id === null ? null : await replayEntity(store, deciders, entity.kind, id, { onPage: progress, codec });
      progress.done();
      if (!report) {
        const noPrefix = entity.kind === 'run' ? `, and ${noRunStartsWith(entity.id)}` : '';
        process.stderr.write(
          `runledger: no ${entity.kind} "${entity.id}" in ${logName(options.db)}: the log holds no event of ${entity.kind}:${entity.id}${noPrefix}\n`,
        );
        process.exitCode = 1;
        return;
      }
      print(options, report, () => formatEntity(report));
      process.exitCode = report.ok ? 0 : 1;
      return;
    }
    if (options.until !== undefined) {
      const report = await replayUntil(store, deciders, projections, options.until, { onPage: progress, codec });
      progress.done();
      print(options, report.difference ? { ...report, seq: report.difference.seq } : report, () => formatUntil(report));
      process.exitCode = report.ok ? 0 : 1;
      return;
    }
    // A log cut by retention: each stretch of the history still there from its starting checkpoint.
    const stretches = store.logFile?.replayStretches();
    const report = await replayLog(store, deciders, { onPage: progress, codec, ...(stretches ? { stretches } : {}) });
    progress.done();
    print(options, report, () => formatVerified(report));
    process.exitCode = report.ok ? 0 : 1;
  } catch (error) {
    if (error instanceof CheckpointMismatchError) {
      process.stderr.write(`runledger: ${error.message}\n`);
      process.exitCode = 1;
      return;
    }
    failOnForeignRow(options, error);
  } finally {
    await store.close();
  }
}

const PROGRESS_EVERY = 100_000;

/** Progress on stderr every 100,000 events, when stderr is a terminal (a script reads stdout only). */
async function progressReporter(head: () => Promise<number>): Promise<((seq: number) => void) & { done: () => void }> {
  const tty = process.stderr.isTTY === true;
  const total = tty ? await head() : 0;
  let next = PROGRESS_EVERY;
  let shown = false;
  const report = Object.assign(
    (seq: number) => {
      if (!tty || seq < next) return;
      next = (Math.floor(seq / PROGRESS_EVERY) + 1) * PROGRESS_EVERY;
      shown = true;
      const share = total ? ` of ${total.toLocaleString('en')} (${Math.floor((seq / total) * 100)}%)` : '';
      process.stderr.write(`\rreplay: seq ${seq.toLocaleString('en')}${share}`);
    },
    {
      done: () => {
        if (shown) process.stderr.write('\n');
      },
    },
  );
  return report;
}
