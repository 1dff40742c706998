import { describe, expect, it } from 'vitest';
import type { AnyDecider } from '../../actors/decider.ts';
import type { DomainEvent, NewDomainEvent } from '../../events/catalog.ts';
import { sameDecision } from '../../replay/compare.ts';
import { deciders } from '../../replay/deciders.ts';
import { replayLog } from '../../replay/replayLog.ts';
import { openScenario } from './scenarioLog.ts';

/** Every decider of a replay, the board's with its decisions changed by `change` (a newer version of it). */
function withBoardChanged(change: (decision: NewDomainEvent) => NewDomainEvent): readonly AnyDecider[] {
  return deciders.map((d) => (d.name === 'board' ? { ...d, decide: (state: never, input: never) => d.decide(state, input).map(change) } : d));
}

async function replayScenario(with_: readonly AnyDecider[]) {
  const store = await openScenario();
  try {
    return await replayLog(store, with_);
  } finally {
    await store.close();
  }
}

const recorded = (data: Record<string, unknown>): DomainEvent =>
  ({ seq: 7, stream: 'run:r1', version: 1, type: 'board.run.running', data, at: 1, cause: 6, actor: 'b' }) as unknown as DomainEvent;
const derived = (data: Record<string, unknown>): NewDomainEvent =>
  ({ stream: 'run:r1', type: 'board.run.running', data, at: 1 }) as unknown as NewDomainEvent;

describe('replay compares a decision on what it decides, not on how its reason is worded', () => {
  it('given the board decider now words every reason otherwise, then the recorded scenario still replays', async () => {
    const reworded = withBoardChanged((d) =>
      'reason' in d.data && typeof d.data.reason === 'string'
        ? ({ ...d, data: { ...d.data, reason: `now: ${d.data.reason}` } } as NewDomainEvent)
        : d,
    );

    expect(await replayScenario(reworded)).toMatchObject({ ok: true });
  });

  it('given the board decider now decides otherwise (another submission order), then replay reports the first decision that differs, naming the field', async () => {
    const changed = withBoardChanged((d) =>
      d.type === 'board.run.queued' ? { ...d, data: { ...d.data, submittedOrder: d.data.submittedOrder + 1 } } : d,
    );

    expect(await replayScenario(changed)).toMatchObject({
      ok: false,
      kind: 'differs',
      detail: 'data.submittedOrder: recorded 0, re-derived 1',
      recorded: [{ type: 'board.run.queued' }, { type: 'board.run.offered' }],
    });
  });

  it("a kill's reason is no wording: its effect reads it (a user's cancel, a restart's kill), so a change of it differs", () => {
    const kill = (reason: string) => ({ stream: 'c1/run:r1', type: 'run.kill.requested', data: { runId: 'r1', pid: 42, reason }, at: 1 });
    const recordedKill = { ...kill('cancelled_by_user'), seq: 7, version: 1, cause: 6, actor: 'c1' } as unknown as DomainEvent;

    expect(sameDecision(recordedKill, kill('cancelled_by_user') as NewDomainEvent)).toBe(true);
    expect(sameDecision(recordedKill, kill('interrupted_by_restart') as NewDomainEvent)).toBe(false);
  });

  it('a recorded reason code is compared on its code, not on its parameters; a recorded sentence is not compared', () => {
    const base = { runId: 'r1', computerId: 'c1' };

    expect(
      sameDecision(recorded({ ...base, reason: { code: 'first.heartbeat' } }), derived({ ...base, reason: { code: 'first.heartbeat', n: 2 } })),
    ).toBe(true);
    expect(sameDecision(recorded({ ...base, reason: { code: 'first.heartbeat' } }), derived({ ...base, reason: { code: 'first.reply' } }))).toBe(
      false,
    );
    expect(sameDecision(recorded({ ...base, reason: { code: 'first.heartbeat' } }), derived({ ...base, reason: 'its first heartbeat came' }))).toBe(
      false,
    );
    expect(sameDecision(recorded({ ...base, reason: 'its first heartbeat came' }), derived({ ...base, reason: { code: 'first.heartbeat' } }))).toBe(
      true,
    );
    expect(
      sameDecision(
        recorded({ ...base, reason: 'its first heartbeat came' }),
        derived({ ...base, computerId: 'c2', reason: 'its first heartbeat came' }),
      ),
    ).toBe(false);
  });
});
