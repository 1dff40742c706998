import fc from 'fast-check';
import type { QueueInput } from '../../actors/lane/decideQueue.ts';
import { loginOf, type QueueState } from '../../actors/lane/queueState.ts';
import { COMPUTER, input, T0 } from './queueSpec.ts';

/**
 * Random histories of one computer for property tests: abstract steps ("answer some claiming run
 * 409 busy") are turned into concrete inputs against the queue as it stands, so every answer, end and
 * timer speaks of a run in the state that makes it meaningful, with now and then a late or stray one.
 */
export type Reply = { status: number; code?: string };

export const REPLIES: readonly Reply[] = [
  { status: 200 },
  { status: 409, code: 'conversation_busy' },
  { status: 409, code: 'claimed_elsewhere' },
  { status: 404 },
  { status: 410 },
  { status: 0 },
  { status: 429 },
  { status: 503 },
];

export type Step =
  | { kind: 'frame'; lane: number; agent: number; to: number; advance: number }
  | { kind: 'resend'; pick: number; to: number; advance: number }
  | { kind: 'cancel'; pick: number; advance: number }
  | { kind: 'answer'; pick: number; reply: number; advance: number }
  | { kind: 'timer'; pick: number; when: 'early' | 'due' | 'late' | 'stray'; advance: number }
  | { kind: 'ended'; pick: number; ok: boolean; advance: number; back: number }
  | { kind: 'startFailed'; pick: number; advance: number }
  | { kind: 'held'; held: boolean; advance: number };

export interface Setup {
  readonly slots: number;
  readonly loginCapacity: Record<string, number>;
  readonly lanes: number;
}

export const LOGINS = ['default', 'x', 'y'] as const;
const AGENTS = [undefined, 'x', 'y'] as const;

/** Mostly small steps of time, some that cross a claim retry, a few that cross the longest busy wait. */
const advance = fc.oneof(
  { arbitrary: fc.constant(0), weight: 2 },
  { arbitrary: fc.integer({ min: 1, max: 5_000 }), weight: 5 },
  { arbitrary: fc.integer({ min: 5_000, max: 40_000 }), weight: 2 },
  { arbitrary: fc.integer({ min: 40_000, max: 130_000 }), weight: 1 },
);
const pick = fc.nat({ max: 1_000 });
/**
 * How long before the latest input a run's end is stamped: its settle is a message that carries its
 * decision's `at`, which may be earlier than an input the queue folded before it (issue 17).
 */
const back = fc.oneof({ arbitrary: fc.constant(0), weight: 3 }, { arbitrary: fc.integer({ min: 1, max: 3_000 }), weight: 1 });
/** Whom a frame is addressed to: mostly unsaid, now and then this computer by name, or another one. */
const to = fc.nat({ max: 5 });
const ADDRESSEES = [undefined, undefined, undefined, undefined, COMPUTER, 'c2'] as const;

export const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('frame' as const), lane: fc.nat({ max: 3 }), agent: fc.nat({ max: 2 }), to, advance }), weight: 6 },
  { arbitrary: fc.record({ kind: fc.constant('resend' as const), pick, to, advance }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('cancel' as const), pick, advance }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('answer' as const), pick, reply: fc.nat({ max: REPLIES.length - 1 }), advance }), weight: 8 },
  {
    arbitrary: fc.record({
      kind: fc.constant('timer' as const),
      pick,
      when: fc.constantFrom('early' as const, 'due' as const, 'late' as const, 'stray' as const),
      advance,
    }),
    weight: 4,
  },
  { arbitrary: fc.record({ kind: fc.constant('ended' as const), pick, ok: fc.boolean(), advance, back }), weight: 4 },
  { arbitrary: fc.record({ kind: fc.constant('startFailed' as const), pick, advance }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('held' as const), held: fc.boolean(), advance }), weight: 1 },
);

export const setupArb: fc.Arbitrary<Setup> = fc.record({
  slots: fc.integer({ min: 1, max: 4 }),
  loginCapacity: fc.dictionary(fc.constantFrom(...LOGINS), fc.integer({ min: 1, max: 3 }), { maxKeys: 3 }),
  lanes: fc.integer({ min: 1, max: 4 }),
});

/** Turns abstract steps into inputs, one at a time, reading the queue the inputs before built. */
export class ScenarioWriter {
  /** ms after T0, never going back (a run's end may be stamped before it: see `back`). */
  now = 0;
  private readonly known: string[] = [];
  private made = 0;

  constructor(private readonly setup: Setup) {}

  configure(): QueueInput {
    return input.configured(this.setup.slots, this.setup.loginCapacity, this.now);
  }

  /** The input for `step` against `state`, or null when the step has nothing to speak of. */
  next(step: Step, state: QueueState): QueueInput | null {
    this.now += step.advance;
    const runs = Object.values(state.runs).sort((a, b) => a.arrival - b.arrival);
    const chosen = 'pick' in step ? step.pick : 0;
    const among = <T>(list: readonly T[]): T | undefined => list[chosen % Math.max(1, list.length)];
    switch (step.kind) {
      case 'frame': {
        const runId = `r${++this.made}`;
        this.known.push(runId);
        const agentId = AGENTS[step.agent];
        return input.frame(runId, `L${step.lane % this.setup.lanes}`, this.now, { ...(agentId ? { agentId } : {}), ...addressed(step.to) });
      }
      case 'resend': {
        // Half of them for a parked run: the board resends a frame when the turn it waited for ended.
        const parked = runs.filter((r) => r.status === 'waiting' && r.busyWaits > 0).map((r) => r.runId);
        const runId = parked.length && step.pick % 2 === 0 ? among(parked) : among(this.known);
        const run = runId ? state.runs[runId] : undefined;
        if (!runId) return null;
        // A resend names the run's own lane; a run already settled here is resent under a lane of its own.
        return input.frame(runId, run?.lane ?? 'L0', this.now, { ...(run?.agentId ? { agentId: run.agentId } : {}), ...addressed(step.to) });
      }
      case 'cancel': {
        const runId = among(this.known);
        return runId ? input.cancelFrame(runId, this.now) : null;
      }
      case 'answer': {
        const claiming = runs.filter((r) => r.status === 'claiming').map((r) => r.runId);
        // Now and then a late answer, for a run no longer claiming.
        const runId = claiming.length && step.pick % 10 !== 0 ? among(claiming) : among(this.known);
        if (!runId) return null;
        const reply = REPLIES[step.reply]!;
        return input.answer(runId, reply.status, this.now, reply.code);
      }
      case 'timer': {
        const waiting = runs.filter((r) => r.status === 'waiting' && r.notBefore > 0);
        const run = step.when === 'stray' ? undefined : among(waiting);
        if (!run) {
          const runId = among(this.known);
          return runId ? input.timer(runId, this.now) : null;
        }
        const due = run.notBefore - T0;
        if (step.when === 'due') this.now = Math.max(this.now, due);
        if (step.when === 'late') this.now = Math.max(this.now, due + step.advance);
        return input.timer(run.runId, this.now);
      }
      case 'ended': {
        const run = among(runs.filter((r) => r.status === 'running'));
        return run ? input.ended(run.runId, Math.max(0, this.now - step.back), step.ok) : null;
      }
      case 'startFailed': {
        const run = among(runs.filter((r) => r.status === 'running'));
        return run ? input.startFailed(run.runId, this.now) : null;
      }
      case 'held':
        return input.held(step.held, this.now);
    }
  }

  /**
   * The next input that moves a queue towards empty, as the runtime would: release the scheduler,
   * grant every claim, end every running run, fire each pending timer at its `notBefore`. Null when
   * the queue is empty; throws when it is stuck (runs left and nothing to move them).
   */
  drain(state: QueueState): QueueInput | null {
    const runs = Object.values(state.runs).sort((a, b) => a.arrival - b.arrival);
    if (runs.length === 0) return null;
    if (state.held) return input.held(false, this.now);
    const claiming = runs.find((r) => r.status === 'claiming');
    if (claiming) return input.answer(claiming.runId, 200, this.now);
    const running = runs.find((r) => r.status === 'running');
    if (running) return input.ended(running.runId, this.now);
    const timed = runs.filter((r) => r.notBefore > 0).sort((a, b) => a.notBefore - b.notBefore)[0];
    if (!timed) {
      const stuck = runs.map((r) => `${r.runId}(${r.lane}, ${loginOf(r)}, ${r.status})`).join(', ');
      throw new Error(`the queue is stuck: nothing claiming, running or timed, yet runs wait: ${stuck}`);
    }
    this.now = Math.max(this.now, timed.notBefore - T0);
    return input.timer(timed.runId, this.now);
  }
}

function addressed(to: number): { computerId?: string } {
  const computerId = ADDRESSEES[to];
  return computerId ? { computerId } : {};
}
