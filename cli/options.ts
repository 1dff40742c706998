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

export function openLog(options: DbOptions) {
  return openSqliteStore(resolve(options.db), options.sync ? { sync: options.sync } : {});
}

/** Prints `value` as JSON or through `human`, whichever the user asked for. */
export function print(options: { json?: boolean }, value: unknown, human: () => string): void {
  process.stdout.write(`${options.json ? JSON.stringify(value) : human()}\n`);
}
