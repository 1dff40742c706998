import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type AnyEventCodec, InvalidEventError } from '../../events/codec.ts';
import { isPostgresUrl, redactUrl } from '../../runtime/store/logLocation.ts';
import { openStore, openStoreToRead } from '../../runtime/store/open/openStore.ts';
import type { ForeignRowPolicy } from '../../runtime/store/rowDecoder.ts';
import { type DbOptions, print } from './options.ts';

/** `--db` as the store opens it: a `postgres://` URL as given, a file's path made absolute. */
export function logLocation(db: string): string {
  return isPostgresUrl(db) ? db : resolve(db);
}

/** `--db` as a message may name it: a file's absolute path, a URL without its password. */
export function logName(db: string): string {
  return isPostgresUrl(db) ? redactUrl(db) : resolve(db);
}

/**
 * Opens the log to write it. Tools that need one there already (`computer list`, `rebuild --write` ...)
 * pass `mustExist`: a mistyped path is then an error naming it, not a fresh empty log, and a file
 * that is not a runledger log is refused before anything is written in it.
 */
export function openLog(
  options: DbOptions,
  { mustExist = false, foreignRows, codec }: { mustExist?: boolean; foreignRows?: 'fail'; codec?: AnyEventCodec } = {},
) {
  return openStore(logLocation(options.db), {
    ...(options.sync ? { sync: options.sync } : {}),
    ...(mustExist ? { existing: true } : {}),
    ...(foreignRows ? { foreignRows } : {}),
    ...(codec ? { codec } : {}),
  });
}

/**
 * Opens the log read-only (`replay`, `rebuild`, `audit`): never created, migrated or written. A row
 * this version cannot read fails a tool that vouches for the whole log (`fail`), else is named on
 * stderr and skipped.
 */
export function openLogToRead(options: DbOptions, foreignRows: ForeignRowPolicy | undefined = undefined, codec?: AnyEventCodec) {
  const path = logLocation(options.db);
  // SQLite answers a folder with "disk I/O error", naming nothing: the path is named, with the file it may hold.
  if (!isPostgresUrl(path) && statSync(path, { throwIfNoEntry: false })?.isDirectory()) {
    const inside = join(path, 'runledger.db');
    throw new Error(
      `--db ${path} is a folder, not a log file: give the log's file${existsSync(inside) ? `, e.g. --db ${inside}` : ' (runledger.db in its folder, by default)'}`,
    );
  }
  return openStoreToRead(path, { ...(foreignRows ? { foreignRows } : {}), ...(codec ? { codec } : {}) });
}

/**
 * `replay` and `rebuild` vouch for the whole log: a row this version cannot read (opened with
 * `foreignRows: 'fail'`) ends them with exit 1 naming its seq (docs/rules.md#the-log). Anything else goes up.
 */
export function failOnForeignRow(options: { json?: boolean }, error: unknown): void {
  if (!(error instanceof InvalidEventError) || error.seq === null) throw error;
  const { seq, type, problem } = error;
  print(
    options,
    { ok: false, seq, type, problem },
    () => `✗ seq ${seq}: ${error.message}: this runledger cannot read it, so it cannot vouch for the log`,
  );
  process.exitCode = 1;
}
