import fc from 'fast-check';
import { it } from 'vitest';
import { decideStep } from '../../actors/decideStep.ts';
import { queueDecider } from '../../actors/queue/queueDecider.ts';
import { initialQueueState } from '../../actors/queue/queueState.ts';
import { QueueModel } from '../support/queueInvariants.ts';
import { ScenarioWriter, setupArb, stepArb } from '../support/queueScenario.ts';
it('hunt', () => {
  fc.assert(fc.property(setupArb, fc.array(stepArb, { minLength: 1, maxLength: 300, size: 'max' }), (setup, steps) => {
    const w = new ScenarioWriter(setup); let s = initialQueueState();
    const m = new QueueModel(setup.slots, setup.loginCapacity);
    const apply = (i: any) => { const st = decideStep(queueDecider, s, i); if (st) s = st.state; m.observe(i, st?.decisions ?? null, s); };
    apply(w.configure());
    for (const step of steps) { const i = w.next(step, s); if (i) apply(i); }
    for (let k = 0; k < 10000; k++) { const i = w.drain(s); if (!i) break; apply(i); }
    m.checkAllSettled(s);
  }), { numRuns: Number(process.env.RUNS ?? 3000) });
}, 600000);
