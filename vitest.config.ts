import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

const TESTS = 'test/**/*.test.ts';

/**
 * A file that swaps a module (`vi.mock`, `vi.doMock`) or sets the process's environment for the
 * modules it loads needs modules of its own: in a shared worker an earlier file has loaded the real
 * module, or the launcher has read the environment, before it. Found by what the file says, so a new
 * such file is isolated without anyone listing it.
 */
const NEEDS_OWN_MODULES = /\bvi\.(?:do)?[mM]ock\(|Object\.assign\(process\.env/;
const isolated = readdirSync('test', { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.test.ts'))
  .map((file) => join('test', file))
  .filter((file) => NEEDS_OWN_MODULES.test(readFileSync(file, 'utf8')));

export default defineConfig({
  test: {
    // The tests run the CLI as a user does, from the built files: built first, when stale. One
    // throwaway PostgreSQL for the run (or RUNLEDGER_TEST_PG_URL's server): the store suite runs on both stores.
    // A data folder of the run's own, so a command without --db never touches the real ~/.local/share.
    globalSetup: ['test/support/isolatedHome.ts', 'test/support/buildOnce.ts', 'test/support/postgresSetup.ts'],
    // Real processes, sockets and SQLite files: generous, but bounded. No test takes a third of it on
    // a quiet machine (the longest, about 12 s, are given their own), so one at twice the load still ends in time.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two at a time on the 2-core machines it runs on: most files wait on real processes and sockets,
    // so one file's waits are the other's CPU (the default, one fewer than the cores, runs them one by one).
    maxWorkers: 2,
    minWorkers: 1,
    projects: [
      // Most files share their worker's modules: loading the product's modules afresh for each of
      // ~200 files cost about a minute and a half of CPU. Every test cleans up what it starts (its
      // daemons, stores, processes), so what a file leaves behind is only loaded code.
      { extends: true, test: { name: 'shared', include: [TESTS], exclude: isolated, isolate: false } },
      { extends: true, test: { name: 'isolated', include: isolated.length > 0 ? isolated : ['no-such-file'], isolate: true } },
    ],
  },
});
