import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { isPostgresUrl, redactUrl } from '../../runtime/store/logLocation.ts';
import { openStoreToRead } from '../../runtime/store/open/openStore.ts';
import type { BackupOptions } from '../commands/backup.ts';
import { openLogToRead } from '../shared/openLog.ts';
import { howChosen, print } from '../shared/options.ts';

/**
 * `runledger backup FILE`: a consistent copy of the SQLite log, taken while the daemon runs
 * (../../runtime/store/sqlite/copyLog.ts), then opened as a log to say what it holds: a copy that
 * cannot be read is an error now, not on the day it is needed.
 */
export async function backup(file: string, o: BackupOptions): Promise<void> {
  if (isPostgresUrl(o.db)) {
    const url = redactUrl(o.db);
    throw new Error(
      `the log is on PostgreSQL (${url}): back it up with PostgreSQL's own tools, e.g. \`pg_dump --format=custom --file ${file} '${url}'\` (pg_restore reads it back)`,
    );
  }
  const log = resolve(o.db);
  const target = resolve(file);
  if (target === log) throw new Error(`${target} is the log itself: give the copy another file`);
  const existing = statSync(target, { throwIfNoEntry: false });
  if (existing?.isDirectory()) throw new Error(`${target} is a folder: give the copy's file, e.g. ${resolve(target, 'runledger.db')}`);
  if (existing && !o.force) throw new Error(`${target} exists already: give another file, or --force to replace it`);
  if (!existsSync(log)) throw new Error(`there is no log at ${log} (${howChosen(o)}): give its file with --db FILE`);

  const source = await openLogToRead(o);
  try {
    if (!source.logFile) throw new Error(`${log} did not open as a SQLite log`);
    source.logFile.copyTo(target);
  } finally {
    await source.close();
  }
  const copy = await openStoreToRead(target);
  const headSeq = await copy.headSeq().finally(() => copy.close());
  const bytes = statSync(target).size;
  print(
    o,
    { log, file: target, head_seq: headSeq, bytes },
    () =>
      `backed up ${log} to ${target}: events up to seq ${headSeq}, ${(bytes / 1024 / 1024).toFixed(1)} MB. ` +
      'The token files beside the log (token, board.secret, computer-*.token) are not in it: copy them too to restore this board as it was',
  );
}
