/**
 * CI's run of the simulator: a fixed set of seeds (small worlds, every fault) and one seed drawn anew
 * each run, printed, so that over many runs the seeds explored keep growing. A failure prints the seed,
 * the invariant and the command that replays it; that seed then becomes a regression test
 * (test/sim/regressions.test.ts). Outages are as long as `npm run sim` draws them: the hole a longer
 * one met (a run skipped by every computer, their streams up, waited for ever) is closed by the
 * board's re-offer (seed 25 in the regressions).
 */
import { randomInt } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseFaults } from '../../sim/faults.ts';
import { formatFailure, runSeeds } from '../../sim/report.ts';

const FIXED = Array.from({ length: 200 }, (_, i) => i + 1);
const options = { faults: parseFaults('all'), size: 'small' as const, shrink: false };
/**
 * Two boards on one log (SPEC 8), sharing the chores' lease and the runs' heartbeats as on PostgreSQL
 * (sim/boards.ts): a few fixed seeds with every fault, a board's death and restart included, and one
 * drawn for this run with every fault but `board` and `disk`. They were left out for two known bugs of
 * the lease's loss, met by about one small world in twenty-five with either: a run left queued after a
 * full log cost the lease (the regressions' seed 25) is fixed; a hook cut by the holder's death never
 * recorded interrupted (seed 23, met with `board`: 18 of 600 small worlds with every fault) is not yet,
 * so both join once it is (with `disk` and without `board`, 400 of 400 small worlds held).
 */
const TWO_BOARDS = Array.from({ length: 10 }, (_, i) => i + 1);
const twoBoards = { faults: parseFaults('all'), size: 'small' as const, boards: 2 as const, shrink: false };
const drawnTwoBoards = { ...twoBoards, faults: parseFaults('crash,stop,twin,skew,net,cut,unreachable,timers,split') };

describe('the simulator over many seeds', () => {
  it('given 200 fixed seeds and one drawn for this run, then every world keeps every invariant', async () => {
    const drawn = randomInt(1_000, 2 ** 31 - 1);
    console.log(`simulator: this run's drawn seed is ${drawn} (replay: npm run sim -- --seed ${drawn} --size small)`);
    const summary = await runSeeds([...FIXED, drawn], options);
    if (summary.failure) console.log(formatFailure(summary.failure));
    console.log(
      `simulator: ${summary.seeds} seeds, ${summary.steps} steps, ${summary.seedsPerSecond} seeds/s; checks ${JSON.stringify(summary.checks)}`,
    );
    expect(summary.failure?.invariant ?? null).toBeNull();
    expect(summary.seeds).toBe(201);
    // Every invariant was put to the test, not merely declared.
    for (const [name, n] of Object.entries(summary.checks)) expect(n, name).toBeGreaterThan(0);
  }, 60_000);

  it('given 10 fixed seeds of two boards on one log and one drawn for this run, then every world keeps every invariant', async () => {
    const drawn = randomInt(1_000, 2 ** 31 - 1);
    console.log(
      `simulator, two boards: this run's drawn seed is ${drawn} (replay: npm run sim -- --seed ${drawn} --size small --boards 2 --faults crash,stop,twin,skew,net,cut,unreachable,timers,split)`,
    );
    for (const [seeds, options] of [
      [TWO_BOARDS, twoBoards],
      [[drawn], drawnTwoBoards],
    ] as const) {
      const summary = await runSeeds(seeds, options);
      if (summary.failure) console.log(formatFailure(summary.failure));
      console.log(`simulator, two boards: ${summary.seeds} seeds, ${summary.steps} steps, ${summary.seedsPerSecond} seeds/s`);
      expect(summary.failure?.invariant ?? null).toBeNull();
      expect(summary.seeds).toBe(seeds.length);
    }
  }, 60_000);
});
