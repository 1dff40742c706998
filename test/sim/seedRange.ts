/**
 * CI's runs of the simulator: fixed seeds only, so a red CI is a bug found, never a draw's luck (new
 * seeds are explored by `npm run sim`, and a seed that fails there becomes a regression test in
 * test/sim/regressions.test.ts). The seeds are split over a few files so the suite's workers share
 * them, each well inside its timeout on a loaded machine.
 */
import { expect } from 'vitest';
import { formatFailure, type RunOptions, runSeeds } from '../../sim/report.ts';

/** Seeds `from`..`to`, inclusive. */
export const seedRange = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/**
 * Plays the seeds and expects every world to keep every invariant; `everyChecked`: each invariant was
 * put to the test at least once, not merely declared (one board's worlds reach them all).
 */
export async function expectSeedsHold(label: string, seeds: readonly number[], options: RunOptions, everyChecked = true): Promise<void> {
  const summary = await runSeeds(seeds, options);
  if (summary.failure) console.log(formatFailure(summary.failure));
  console.log(`${label}: ${summary.seeds} seeds, ${summary.steps} steps, ${summary.seedsPerSecond} seeds/s`);
  expect(summary.failure?.invariant ?? null).toBeNull();
  expect(summary.seeds).toBe(seeds.length);
  if (everyChecked) for (const [name, n] of Object.entries(summary.checks)) expect(n, name).toBeGreaterThan(0);
}
