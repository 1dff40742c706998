import type { EventData } from '../../events/catalog.ts';
import { parseStream } from '../../events/envelope.ts';
import { describeChanges } from '../../events/workspace.ts';
import type { ShowOptions } from '../commands/client.ts';
import { logName, openLogToRead } from '../shared/openLog.ts';
import { print } from '../shared/options.ts';

/**
 * `runledger show RUN --diff`: the diff its turn left in its worktree, as the computer recorded it with
 * the turn's exit (README "Workspaces in a repository"). It is read from the log at --db, the computer's
 * own: the board keeps only the summary. A run that ran in no worktree, or on a computer whose log
 * this is not, is said so.
 */
export async function showDiff(runId: string, o: ShowOptions, computerId: string | null): Promise<void> {
  const store = await openLogToRead(o);
  let exit: EventData<'run.process.exited'> | null = null;
  try {
    for (const event of await store.readEntity(`run:${runId}`)) {
      if (event.type !== 'run.process.exited' || parseStream(event.stream).owner === null) continue;
      if (event.data.changes || event.data.changesError || exit === null) exit = event.data;
    }
  } finally {
    await store.close();
  }
  if (exit === null) {
    const where = computerId ? `computer ${computerId}'s log` : 'the log of the computer that ran it';
    throw new Error(`run ${runId} has no recorded exit in ${logName(o.db)}: its diff is in ${where}; give that log with --db (on its machine)`);
  }
  const { changes, changesError } = exit;
  if (o.json) {
    print(o, { run_id: runId, ...(changes ? { changes } : {}), ...(changesError ? { error: changesError } : {}) }, () => '');
    return;
  }
  if (changesError) throw new Error(`what run ${runId} changed could not be read: ${changesError}`);
  if (!changes) {
    process.stdout.write(`run ${runId} ran in a plain folder, not in a worktree of a repository: it has no diff\n`);
    return;
  }
  process.stderr.write(
    `run ${runId} ${describeChanges(changes)} (${changes.base.slice(0, 12)}..${changes.head.slice(0, 12)}, repository ${changes.repo})\n`,
  );
  process.stdout.write(changes.diff);
}
