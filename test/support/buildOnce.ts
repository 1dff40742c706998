import type { TestProject } from 'vitest/node';
import { ensureBuilt } from '../../build.ts';

/**
 * vitest's global setup: the tests spawn `cli/runledger.js`, which runs the built files (dist/), so
 * they are built from the sources as they are before any test runs, and again before a watch-mode
 * rerun. A tree that matches its last build costs a hash, not a build; a failed build fails the run.
 */
export default async function setup(project: TestProject): Promise<void> {
  await build();
  project.onTestsRerun(build);
}

async function build(): Promise<void> {
  const started = performance.now();
  if (await ensureBuilt()) process.stderr.write(`runledger: built dist/ for the tests in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
}
