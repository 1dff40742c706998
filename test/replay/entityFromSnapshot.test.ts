import { describe, expect, it } from 'vitest';
import type { DomainEvent } from '../../events/catalog.ts';
import { aliasOf, snapshotNameOf } from '../../replay/deciderStates.ts';
import { deciders } from '../../replay/deciders.ts';
import { replayEntity } from '../../replay/replayEntity.ts';
import { openScenario } from './scenarioLog.ts';

/**
 * `replay --run` in time independent of log length (issue 16): the run decider's states are never
 * snapshotted by a daemon (only the board's and the queue's, as their projections' checkpoints), yet a
 * run holds nothing before its first event, so the fold starts at the board's and queue's snapshot
 * before the run, not at seq 0, and re-derives the same.
 */
describe('replay --run from the snapshots before the run', () => {
  it('folds from the board and queue snapshot before the run, with no run snapshot, and re-derives the same as from seq 0', async () => {
    const fromZero = await openScenario();
    const log = await fromZero.readAll(0, 10_000);
    const whole = (await replayEntity(fromZero, deciders, 'run', 'r4'))!;
    await fromZero.close();
    const firstOfRun = log.find((e) => e.stream.endsWith('run:r4') || (e.data as { runId?: string }).runId === 'r4')!.seq;
    const at = firstOfRun - 1;
    expect(at).toBeGreaterThan(0);

    const store = await openScenario();
    for (const decider of deciders) {
      const alias = aliasOf(decider);
      if (!alias) continue;
      const state = log.filter((e) => e.seq <= at).reduce((s: unknown, e: DomainEvent) => alias.projection.evolve(s, e), alias.projection.initial());
      await store.snapshots.save({ name: snapshotNameOf(decider), seq: at, state: JSON.stringify(state) });
    }
    const fromSnapshot = (await replayEntity(store, deciders, 'run', 'r4'))!;
    await store.close();

    expect(fromSnapshot.folded.from).toBe(at);
    expect(fromSnapshot.folded.events).toBeLessThan(whole.folded.events);
    expect(fromSnapshot.ok).toBe(true);
    const decided = (r: typeof whole) =>
      r.steps.map((s) => ({ input: s.input.seq, recorded: s.recorded, rederived: s.rederived, difference: s.difference }));
    expect(decided(fromSnapshot)).toEqual(decided(whole));
    expect(fromSnapshot.undecided).toEqual(whole.undecided);
  });
});
