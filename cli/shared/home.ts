import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';

/**
 * Where a command finds the log when `--db` is not given, the same for every command from any folder:
 * `RUNLEDGER_DB`, else `$RUNLEDGER_HOME/runledger.db`, else the user's data folder
 * (`$XDG_DATA_HOME/runledger/runledger.db`, else `~/.local/share/runledger/runledger.db`). The tokens
 * live beside the log, so a `submit` typed in any folder finds the token of the daemon the user started.
 *
 * The log used to be `./.runledger/runledger.db` of the folder a command ran in. Such a log is still
 * used where it exists and nothing of runledger's says otherwise (no `--db`, `RUNLEDGER_DB` or
 * `RUNLEDGER_HOME`), with a line saying so: an upgrade orphans no log.
 *
 * Loaded at every start (the option's definition uses it): node's path, os and fs only.
 */

/** The log as a command will open it, and how it was chosen, for the messages that name it. */
export interface LogChoice {
  /** A file's path (absolute unless given relative with --db or RUNLEDGER_DB), or a `postgres://` URL. */
  readonly db: string;
  /** How it was chosen, as a message says it after the log's name: "given with --db", "from RUNLEDGER_HOME=/srv/runledger", ... */
  readonly how: string;
  /** A line for stderr when the former default is in use. */
  readonly note: string | null;
}

/** The environment variables the choice reads (a test gives its own). */
export interface HomeEnv {
  readonly RUNLEDGER_DB?: string | undefined;
  readonly RUNLEDGER_HOME?: string | undefined;
  readonly XDG_DATA_HOME?: string | undefined;
  readonly HOME?: string | undefined;
}

export const LOG_FILE = 'runledger.db';
/** The former default, relative to the folder a command runs in. */
export const FORMER_DEFAULT = './.runledger/runledger.db';

/** Said in `--db`'s help: the order in which the log is found. */
export const HOME_ORDER =
  '$RUNLEDGER_DB, else $RUNLEDGER_HOME/runledger.db, else $XDG_DATA_HOME/runledger/runledger.db or ~/.local/share/runledger/runledger.db';

export function chooseLog(given: string | undefined, env: HomeEnv, cwd: string, exists: (path: string) => boolean = existsSync): LogChoice {
  if (given !== undefined && given !== '') return { db: given, how: 'given with --db', note: null };
  if (env.RUNLEDGER_DB) return { db: env.RUNLEDGER_DB, how: `from RUNLEDGER_DB=${env.RUNLEDGER_DB}`, note: null };
  if (env.RUNLEDGER_HOME)
    return { db: join(resolve(cwd, env.RUNLEDGER_HOME), LOG_FILE), how: `from RUNLEDGER_HOME=${env.RUNLEDGER_HOME}`, note: null };
  const home = userDataHome(env);
  const former = resolve(cwd, FORMER_DEFAULT);
  if (exists(former)) {
    return {
      db: former,
      how: `the former default, ${FORMER_DEFAULT} of the current folder, which exists`,
      note:
        `using the log at ${former}, the former default (${FORMER_DEFAULT} of the current folder); the default is now ${home.db}. ` +
        `To use this one from any folder, set RUNLEDGER_HOME=${resolve(cwd, '.runledger')}`,
    };
  }
  return { db: home.db, how: home.how, note: null };
}

/**
 * The user's data folder as the XDG base directory rules give it: `$XDG_DATA_HOME` when it is an
 * absolute path (a relative one is to be ignored), else `~/.local/share`.
 */
function userDataHome(env: HomeEnv): { db: string; how: string } {
  if (env.XDG_DATA_HOME && isAbsolute(env.XDG_DATA_HOME))
    return {
      db: join(env.XDG_DATA_HOME, 'runledger', LOG_FILE),
      how: `the default home in XDG_DATA_HOME=${env.XDG_DATA_HOME}, as neither RUNLEDGER_DB nor RUNLEDGER_HOME is set`,
    };
  const home = env.HOME || homedir();
  return {
    db: join(home, '.local/share/runledger', LOG_FILE),
    how: 'the default home in ~/.local/share, as none of RUNLEDGER_DB, RUNLEDGER_HOME, XDG_DATA_HOME is set',
  };
}
