import fc from 'fast-check';
import type { BoardState } from '../../actors/board/boardState.ts';
import type { BoardInput } from '../../actors/board/decideBoard.ts';
import { input } from './boardSpec.ts';

/**
 * Random histories of a board with a few computers: abstract steps ("some computer claims some run")
 * are turned into inputs against the board as it stands, so most speak of a run in a state where they
 * mean something, and now and then one is late, stray or from the wrong computer.
 */
export type Step =
  | { kind: 'submit'; lane: number; key: number | null; advance: number }
  | { kind: 'connect'; computer: number; advance: number }
  | { kind: 'disconnect'; computer: number; advance: number }
  | { kind: 'claim'; pick: number; computer: number; life: number; advance: number }
  | { kind: 'decline'; pick: number; computer: number; advance: number }
  | { kind: 'started'; pick: number; advance: number }
  | { kind: 'reply'; pick: number; stranger: boolean; advance: number }
  | { kind: 'complete'; pick: number; outcome: 'ok' | 'failed' | 'cancelled'; stranger: boolean; advance: number }
  | { kind: 'cancel'; pick: number; advance: number }
  | { kind: 'lapse'; pick: number; advance: number };

const advance = fc.oneof(
  { arbitrary: fc.constant(0), weight: 2 },
  { arbitrary: fc.integer({ min: 1, max: 30_000 }), weight: 5 },
  { arbitrary: fc.integer({ min: 30_000, max: 200_000 }), weight: 1 },
);
const pick = fc.nat({ max: 1_000 });
const computer = fc.nat({ max: 2 });

export const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    arbitrary: fc.record({
      kind: fc.constant('submit' as const),
      lane: fc.nat({ max: 2 }),
      key: fc.option(fc.nat({ max: 4 }), { freq: 3 }),
      advance,
    }),
    weight: 6,
  },
  { arbitrary: fc.record({ kind: fc.constant('connect' as const), computer, advance }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('disconnect' as const), computer, advance }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('claim' as const), pick, computer, life: fc.nat({ max: 2 }), advance }), weight: 10 },
  { arbitrary: fc.record({ kind: fc.constant('decline' as const), pick, computer, advance }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('started' as const), pick, advance }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('reply' as const), pick, stranger: fc.boolean(), advance }), weight: 2 },
  {
    arbitrary: fc.record({
      kind: fc.constant('complete' as const),
      pick,
      outcome: fc.constantFrom('ok' as const, 'failed' as const, 'cancelled' as const),
      stranger: fc.boolean(),
      advance,
    }),
    weight: 5,
  },
  { arbitrary: fc.record({ kind: fc.constant('cancel' as const), pick, advance }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('lapse' as const), pick, advance }), weight: 2 },
);

export const computersArb = fc.integer({ min: 2, max: 3 });

/** Turns abstract steps into inputs, one at a time, reading the board the inputs before built. */
export class ScenarioWriter {
  /** ms after T0, never going back. */
  now = 0;
  private readonly known: string[] = [];
  private made = 0;
  readonly computers: string[];

  constructor(computers: number) {
    this.computers = Array.from({ length: computers }, (_, i) => `c${i + 1}`);
  }

  /** Every computer added; the first one connected. */
  setup(): BoardInput[] {
    return [...this.computers.map((c) => input.added(c)), input.connected(this.computers[0]!)];
  }

  next(step: Step, state: BoardState): BoardInput {
    this.now += step.advance;
    const at = this.now;
    const pick = 'pick' in step ? step.pick : 0;
    const among = <T>(list: readonly T[]): T | undefined => list[pick % Math.max(1, list.length)];
    // Mostly a run still open; now and then any run ever made, or one the board never saw.
    const openRuns = this.known.filter((id) => ['queued', 'claimed', 'running'].includes(state.runs[id]?.state ?? ''));
    const anyRun = (): string => (pick % 17 === 0 ? 'ghost' : (among(pick % 5 === 0 ? this.known : openRuns) ?? among(this.known) ?? 'ghost'));
    const heldBy = (runId: string): string => state.runs[runId]?.computerId ?? this.computers[0]!;
    const stranger = (runId: string): string => this.computers.find((c) => c !== heldBy(runId))!;
    switch (step.kind) {
      case 'submit': {
        const runId = `r${++this.made}`;
        this.known.push(runId);
        // A key's body depends on the key and the lane: a reused key is now a retry, now another body.
        return input.submit(
          runId,
          `L${step.lane}`,
          at,
          step.key === null ? {} : { idempotencyKey: `k${step.key}`, prompt: `prompt of k${step.key}` },
        );
      }
      case 'connect':
        return input.connected(this.computers[step.computer % this.computers.length]!, at);
      case 'disconnect':
        return input.disconnected(this.computers[step.computer % this.computers.length]!, at);
      case 'claim':
        // Life 0 is an older computer that sends no incarnation; lives 1 and 2 are twins of one computer.
        return input.claim(anyRun(), this.computers[step.computer % this.computers.length]!, at, step.life === 0 ? undefined : `life-${step.life}`);
      case 'decline':
        return input.draining(anyRun(), this.computers[step.computer % this.computers.length]!, at);
      case 'started': {
        const runId = anyRun();
        return input.started(runId, heldBy(runId), at);
      }
      case 'reply': {
        const runId = anyRun();
        return input.reply(runId, step.stranger ? stranger(runId) : heldBy(runId), `reply at ${at}`, at);
      }
      case 'complete': {
        const runId = anyRun();
        const who = step.stranger && step.pick % 3 === 0 ? stranger(runId) : heldBy(runId);
        const error = step.outcome === 'ok' ? undefined : step.outcome === 'cancelled' ? 'cancelled_by_user' : `failed at ${at}`;
        return input.complete(runId, who, step.outcome === 'ok', error, at);
      }
      case 'cancel':
        return input.cancel(anyRun(), at);
      case 'lapse': {
        const runId = anyRun();
        return input.lapsed(runId, Math.max(0, at - 90_000), at);
      }
    }
  }
}
