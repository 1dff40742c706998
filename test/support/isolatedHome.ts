import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** runledger's settings from the environment: a developer's own must not steer the tests' commands. */
const SETTINGS = ['RUNLEDGER_DB', 'RUNLEDGER_HOME', 'RUNLEDGER_SERVER', 'RUNLEDGER_TOKEN', 'RUNLEDGER_COMPUTER_TOKEN'] as const;

/**
 * vitest's global setup: a command a test runs without `--db` finds its log in the user's data folder
 * (cli/shared/home.ts), which must never be the real ~/.local/share of whoever runs the tests. The run
 * gets a data folder of its own (XDG_DATA_HOME, which every test process and the commands they start
 * inherit), removed at the end, and none of runledger's settings from the environment.
 */
export default function setup(): () => void {
  const home = mkdtempSync(join(tmpdir(), 'runledger-test-data-'));
  process.env.XDG_DATA_HOME = home;
  for (const name of SETTINGS) delete process.env[name];
  return () => rmSync(home, { recursive: true, force: true });
}
