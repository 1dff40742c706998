import { existsSync } from 'node:fs';
import type { RunDiffBody } from '../../adapters/http/runDiff.ts';
import type { EventData } from '../../events/catalog.ts';
import { parseStream } from '../../events/envelope.ts';
import { changesFromWire, changesToWire } from '../../events/wire/changes.ts';
import { describeChanges } from '../../events/workspace.ts';
import { isPostgresUrl } from '../../runtime/store/logLocation.ts';
import type { ShowOptions } from '../commands/client.ts';
import { boardCall, refusal } from '../shared/boardCall.ts';
import { logLocation, logName, openLogToRead } from '../shared/openLog.ts';
import { print } from '../shared/options.ts';

/** A run's diff and what its turn changed, as the board or a computer's log gives them; `error` when it could not be read. */
type RunDiff = RunDiffBody & { error?: string };

/**
 * `runledger show RUN --diff`: the diff its turn left in its worktree, as its computer recorded it with
 * the turn's exit (docs/agents.md#workspaces-in-a-repository). The board gives it when it holds the
 * computer's events (its own, or the copy a computer reports), so a laptop needs nothing but the
 * board's URL and token; else, or from a board older than the route, the log at --db is read: the
 * computer's own, on its machine.
 */
export async function showDiff(runId: string, o: ShowOptions, computerId: string | null): Promise<void> {
  const answer = await boardCall(o, 'GET', `/v1/runs/${encodeURIComponent(runId)}/diff`);
  let found: RunDiff | null = answer.status === 200 ? (answer.body as unknown as RunDiff) : null;
  if (found === null && !localLogExists(o.db)) throw new Error(refusal(answer));
  found ??= await fromLog(runId, o, computerId);
  printDiff(runId, o, found);
}

function localLogExists(db: string): boolean {
  return isPostgresUrl(db) || existsSync(logLocation(db));
}

/** The run's exit as a computer's own log holds it. */
async function fromLog(runId: string, o: ShowOptions, computerId: string | null): Promise<RunDiff> {
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
  if (!changes) return { run_id: runId, changes: null, ...(changesError ? { error: changesError } : {}) };
  return {
    run_id: runId,
    changes: changesToWire(changes),
    diff: changes.diff,
    diff_bytes: changes.diffBytes,
    diff_cut: changes.diffCut,
    repo: changes.repo,
  };
}

function printDiff(runId: string, o: ShowOptions, found: RunDiff): void {
  if (o.json) {
    const { error, ...body } = found;
    print(o, { ...body, ...(error ? { error } : {}) }, () => '');
    return;
  }
  if (found.error) throw new Error(`what run ${runId} changed could not be read: ${found.error}`);
  if (found.changes === null) {
    process.stdout.write(`run ${runId} ran in a plain folder, not in a worktree of a repository: it has no diff\n`);
    return;
  }
  const { base, head } = found.changes;
  const where = found.repo ? `, repository ${found.repo}` : '';
  process.stderr.write(`run ${runId} ${describeChanges(changesFromWire(found.changes))} (${base.slice(0, 12)}..${head.slice(0, 12)}${where})\n`);
  process.stdout.write(found.diff ?? '');
}
