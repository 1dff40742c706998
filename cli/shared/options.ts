import type { Command, OptionValues } from '@commander-js/extra-typings';

/**
 * What the command definitions share. Every start loads the definitions (`--help` lists them all), so
 * this file and they import nothing heavy: no store, no schemas; an action loads those with its command.
 */

export const DEFAULT_DB = './.runledger/runledger.db';
export const DEFAULT_SERVER = 'http://127.0.0.1:7420';
/** The daemon's default agent, so `run` and `daemon` run the same thing unless told otherwise. */
export const DEMO_EXEC = `node ${new URL('./demoAgent.mjs', import.meta.url).pathname}`;

export interface DbOptions {
  db: string;
  json?: boolean;
  sync?: 'full' | 'normal';
}

/** The option values of a command definition, as its action receives them (typed from its `.option`s). */
export type OptionsOf<C extends { opts(): OptionValues }> = ReturnType<C['opts']>;

export function withDb<Args extends unknown[], Opts extends OptionValues, Globals extends OptionValues>(command: Command<Args, Opts, Globals>) {
  return command.option('--db <file>', 'the SQLite log', DEFAULT_DB).option('--json', 'print results as JSON, for scripts');
}

/** Prints `value` as JSON or through `human`, whichever the user asked for. */
export function print(options: { json?: boolean }, value: unknown, human: () => string): void {
  process.stdout.write(`${options.json ? JSON.stringify(value) : human()}\n`);
}
