import type { DomainEvent } from '../../events/catalog.ts';
import { parseStream } from '../../events/envelope.ts';
import { type EffectConsumer, RUN_EFFECTS_AT_ONCE } from '../outbox/outbox.ts';
import { errorCodeOf } from '../queue/claimAnswer.ts';
import { type Skill, parseSkills } from './skills.ts';

/** The board's claim call, as the computer sees it (the HTTP client in production, a stand-in in tests). */
export interface BoardClaims {
  /** `status` 0 for a network error; `body` the parsed JSON answer, when there was one. */
  claim(runId: string, incarnation?: string): Promise<{ status: number; body?: unknown }>;
}

export interface ClaimAnswer {
  /** The stream of the claim's start (its lane's): the answer is recorded beside it. */
  readonly stream: string;
  readonly runId: string;
  readonly status: number;
  readonly code?: string;
  readonly skills?: string[];
  readonly run?: { prompt: string; agentId: string | null; timeoutS: number | null };
}

/** A claim to make: the run, the lane stream its answer is recorded in, the life that started it. */
export interface ClaimEffect {
  readonly runId: string;
  readonly stream: string;
  readonly incarnation: string | undefined;
}

/** What a granted claim hands the computer besides the recorded answer: never written to the log. */
export interface GrantedClaim {
  readonly runId: string;
  readonly lane: string | null;
  readonly runToken: string;
  readonly skills: Skill[];
}

/**
 * Claims are calls to the board, idempotent on run_id: taken at least once from the outbox. A crash
 * between the call and the recorded answer repeats the call, and the board answers 200 again with
 * the same run token.
 */
export function claimConsumer(
  computer: string,
  board: BoardClaims,
  answered: (answer: ClaimAnswer) => Promise<void>,
  granted: (claim: GrantedClaim) => void = () => {},
): EffectConsumer<ClaimEffect> {
  return {
    name: `claims-${computer}`,
    delivery: 'at-least-once',
    concurrency: RUN_EFFECTS_AT_ONCE,
    effectOf: (event: DomainEvent) =>
      event.type === 'run.claim.started' && parseStream(event.stream).owner === computer
        ? { runId: event.data.runId, stream: event.stream, incarnation: event.data.incarnation }
        : null,
    async perform({ runId, stream, incarnation }) {
      let answer: { status: number; body?: unknown };
      try {
        // The life that started the claim, even when a later life repeats it after a restart.
        answer = await board.claim(runId, incarnation);
      } catch {
        answer = { status: 0 };
      }
      const code = errorCodeOf(answer.body);
      if (answer.status !== 200 && answer.status !== 201) {
        await answered({ stream, runId, status: answer.status, ...(code ? { code } : {}) });
        return { ok: true, detail: `answered ${answer.status}${code ? ` ${code}` : ''}` };
      }
      let claim: GrantedClaim & { run: NonNullable<ClaimAnswer['run']> };
      try {
        claim = grantedClaimOf(runId, answer.body);
      } catch (error) {
        // A 200 we cannot use is the board's fault, not the run's: recorded as a refusal, with why.
        await answered({ stream, runId, status: 502, code: 'bad_claim_answer' });
        return { ok: false, detail: (error as Error).message };
      }
      granted(claim);
      await answered({ stream, runId, status: answer.status, skills: claim.skills.map((s) => s.key), run: claim.run });
      return { ok: true, detail: `answered ${answer.status}` };
    },
  };
}

function grantedClaimOf(runId: string, body: unknown): GrantedClaim & { run: NonNullable<ClaimAnswer['run']> } {
  const { run, run_token: runToken, skills } = (body ?? {}) as { run?: Record<string, unknown>; run_token?: unknown; skills?: unknown };
  if (typeof runToken !== 'string' || runToken === '') throw new Error('the claim answer has no run_token');
  if (!run || typeof run.prompt !== 'string') throw new Error('the claim answer has no run.prompt');
  const agentId = typeof run.agent_id === 'string' && /^[A-Za-z0-9-]{1,64}$/.test(run.agent_id) ? run.agent_id : null;
  const timeoutS = typeof run.timeout_s === 'number' && run.timeout_s >= 0 ? run.timeout_s : null;
  const lane = typeof run.lane === 'string' && /^[A-Za-z0-9-]{1,64}$/.test(run.lane) ? run.lane : null;
  return { runId, lane, runToken, skills: parseSkills(skills), run: { prompt: run.prompt, agentId, timeoutS } };
}
