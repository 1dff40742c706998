import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { openSqliteStore } from '../events/store/sqlite/sqliteEventStore.ts';

export const DEFAULT_DB = './.runledger/runledger.db';

export interface DbOptions {
  db: string;
  json?: boolean;
  sync?: 'full' | 'normal';
}

export function withDb(command: Command): Command {
  return command
    .option('--db <file>', 'the SQLite log', DEFAULT_DB)
    .option('--json', 'print results as JSON, for scripts');
}

/**
 * Opens the log. Tools that only read (`replay`, `rebuild`, `audit`, `status`) pass `mustExist`: a
 * mistyped path is then an error naming it, not a fresh empty log that agrees with everything.
 */
export function openLog(options: DbOptions, { mustExist = false } = {}) {
  const path = resolve(options.db);
  if (mustExist && !existsSync(path)) {
    throw new Error(`no runledger log at ${path}: check --db (the default is ${DEFAULT_DB}, relative to the current folder)`);
  }
  return openSqliteStore(path, options.sync ? { sync: options.sync } : {});
}

/** Prints `value` as JSON or through `human`, whichever the user asked for. */
export function print(options: { json?: boolean }, value: unknown, human: () => string): void {
  process.stdout.write(`${options.json ? JSON.stringify(value) : human()}\n`);
}
