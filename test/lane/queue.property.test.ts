import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { QueueDecision, QueueInput } from '../../actors/lane/decideQueue.ts';
import { queueDecider } from '../../actors/lane/queueDecider.ts';
import { initialQueueState, type QueueState } from '../../actors/lane/queueState.ts';
import { queueProjection } from '../../projections/queue.ts';
import { deciders } from '../../replay/deciders.ts';
import { replayLog } from '../../replay/replayLog.ts';
import { decideAndAppend } from '../../runtime/actors/decideAndAppend.ts';
import { hydrateProjections } from '../../runtime/folds/hydrate.ts';
import { rebuildProjections } from '../../runtime/folds/keeper/rebuild.ts';
import { projections } from '../../runtime/folds/keeper/registry.ts';
import { json, type Recorded, recordedHistory, trail } from '../support/deciderSpec.ts';
import { withHandled } from '../support/handledShell.ts';
import { QueueModel } from '../support/queueInvariants.ts';
import { ScenarioWriter, type Setup, type Step, setupArb, stepArb } from '../support/queueScenario.ts';
import { COMPUTER } from '../support/queueSpec.ts';
import { openTempStore } from '../support/tempStore.ts';

/** Runs the scenario in memory, checking every step, then drives the queue until every run settled. */
function runInMemory(setup: Setup, steps: readonly Step[]): { history: Recorded<QueueInput, QueueDecision>[]; state: QueueState; model: QueueModel } {
  const writer = new ScenarioWriter(setup);
  const model = new QueueModel(setup.slots, setup.loginCapacity, COMPUTER);
  const recorded = recordedHistory(queueDecider, initialQueueState(), model);
  const { history, apply } = recorded;
  apply(writer.configure());
  for (const step of steps) {
    const input = writer.next(step, recorded.state);
    if (input)
      apply(
        withHandled(
          recorded.state,
          input,
          history.flatMap((r) => r.decisions ?? []),
        ),
      );
  }
  // The runtime's part: every claim granted, every run ended, every timer fired when due.
  const limit = 20 * (model.queued + 5);
  for (let i = 0; ; i++) {
    if (i > limit) throw new Error(`the queue did not drain within ${limit} inputs\n${trail(history)}`);
    const input = writer.drain(recorded.state);
    if (!input) break;
    apply(input);
  }
  model.checkAllSettled(recorded.state);
  return { history, state: recorded.state, model };
}

describe('queue: properties over random histories', () => {
  it('keeps lanes, slots and logins within their rules at every step, settles every run exactly once, and its log replays and rebuilds to the same state', async () => {
    await fc.assert(
      fc.asyncProperty(setupArb, fc.array(stepArb, { minLength: 1, maxLength: 150, size: 'max' }), async (setup, steps) => {
        const { history, state } = runInMemory(setup, steps);

        // The same inputs through the real log: each step decided and appended in one transaction. (An
        // in-memory SQLite log: the file's own paths, WAL and fsync, are the store tests'; 150 new files
        // with their migrations were half of this test's time.)
        const store = await openTempStore(':memory:');
        const versions = new Map<string, number>();
        let logged = initialQueueState();
        for (const { input, decisions } of history) {
          const outcome = await decideAndAppend(store, queueDecider, logged, input, versions, (s) => store.streamVersion(s));
          if (!outcome.ok) throw outcome.conflict;
          logged = outcome.state;
          if (decisions === null) expect(outcome.input).toBeNull();
          else expect(outcome.decisions.map((d) => [d.type, d.data])).toEqual(json(decisions.map((d) => [d.type, d.data])));
        }
        expect(json(logged)).toEqual(json(state));

        const replay = await replayLog(store, deciders);
        expect(replay).toMatchObject({ ok: true, inputs: history.filter((r) => r.decisions !== null).length });

        const folded = await hydrateProjections(store, [queueProjection]);
        expect(json(folded.get('queue')!.state)).toEqual({ [COMPUTER]: json(state) });
        await rebuildProjections(store, projections, { write: true });
        expect((await rebuildProjections(store, projections)).every((r) => r.equal)).toBe(true);
        const hydrated = await hydrateProjections(store, [queueProjection]);
        expect(hydrated.get('queue')!.seq).toBe(await store.headSeq());
        expect(hydrated.get('queue')!.state).toEqual({ [COMPUTER]: json(state) });
        await store.close();
      }),
      { numRuns: 150 },
    );
  });
});
