import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The tests run the CLI as a user does, from the built files: built first, when stale. One
    // throwaway PostgreSQL for the run (or RUNLEDGER_TEST_PG_URL's server): the store suite runs on both stores.
    // A data folder of the run's own, so a command without --db never touches the real ~/.local/share.
    // The TypeScript scripts the tests start as processes of their own, bundled once (test/support/builtScripts.ts).
    globalSetup: ['test/support/isolatedHome.ts', 'test/support/buildOnce.ts', 'test/support/buildScripts.ts', 'test/support/postgresSetup.ts'],
    // Real processes, sockets and SQLite files: generous, but bounded. No test takes a third of it on
    // a quiet machine (the longest, about 12 s, are given their own), so one at twice the load still ends in time.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Three at a time on the 2-core machines it runs on: most files wait on real processes, sockets and
    // timers, so one file's waits are another's CPU, but each worker loads the whole module graph again
    // (below), and the suite keeps both cores busy with three. Measured back to back on one machine
    // (4 December 2026, no cache, so files in CI's order): two 305 s (cores idle 25%), three 231-242 s
    // (idle 12%), four 278 s (idle 2%, but 30% more CPU: the files' processes contend for caches and
    // cores). Spreading the waiting files (e2e, faults, workspace) through the run instead of their
    // size's order also cost more CPU than the idle it filled (252, 255 s). As many kept as run: with
    // files sharing workers, tinypool retires an idle worker above the minimum, and one retired while the
    // pool hands it the next file fails the run ("Terminating worker thread").
    maxWorkers: 3,
    minWorkers: 3,
    // A worker runs file after file in one module graph: each file's imports (zod's schemas, the event
    // catalogue, kysely, playwright) load once per worker instead of once per file, which was a third of
    // the suite's CPU. So a file leaves nothing behind: its timers, servers, daemons, folders and browser
    // contexts stop in its afterEach/afterAll, and a module it swaps (vi.doMock) is put back and the copies
    // dropped (test/layout/sharedWorkers.test.ts refuses a `vi.mock`, which cannot be undone). The one thing
    // kept on purpose is the worker's Chromium, which ends with the worker (test/web/workerChromium.ts).
    isolate: false,
  },
});
