import { runWorld, type WorldOptions, type WorldResult } from './world.ts';

/**
 * The shortest history that still breaks the same invariant: faults dropped one at a time while it
 * still breaks, then runs of the workload likewise (greedy, one pass each, so a few dozen worlds at
 * most). Each try is a whole world played again from the same seed: the result is replayable.
 */
export async function shrink(world: WorldOptions, failed: WorldResult): Promise<{ result: WorldResult; keepRuns: number[] | null; tries: number }> {
  const invariant = failed.violation!.invariant;
  let best = failed;
  let plan = [...failed.plan];
  let keep: number[] = Array.from({ length: failed.drawnRuns }, (_, i) => i);
  let tries = 0;
  const still = async (candidate: { plan: typeof plan; keep: number[] }) => {
    tries++;
    const result = await runWorld({ ...world, plan: candidate.plan, keepRuns: candidate.keep });
    return result.violation?.invariant === invariant ? result : null;
  };
  for (let i = plan.length - 1; i >= 0; i--) {
    const candidate = plan.filter((_, j) => j !== i);
    const result = await still({ plan: candidate, keep });
    if (result) {
      plan = candidate;
      best = result;
    }
  }
  for (let i = keep.length - 1; i >= 0 && keep.length > 1; i--) {
    const candidate = keep.filter((_, j) => j !== i);
    const result = await still({ plan, keep: candidate });
    if (result) {
      keep = candidate;
      best = result;
    }
  }
  return { result: best, keepRuns: keep.length === failed.drawnRuns ? null : keep, tries };
}
