import * as z from 'zod';
import { errorCodeOf } from '../../actors/lane/claimAnswer.ts';
import { TimeoutSeconds } from '../../events/boardEvents.ts';
import type { DomainEvent } from '../../events/catalog.ts';
import { parseStream } from '../../events/envelope.ts';
import { SafeId } from '../../events/safeId.ts';
import { messageOf } from '../../events/thrown.ts';
import { BaseRef, RepoName } from '../../events/workspace.ts';
import { type EffectConsumer, RUN_EFFECTS_AT_ONCE } from '../../runtime/actors/effectConsumer.ts';
import { parseSkills, type Skill } from './skills.ts';

/** The code a claim call that threw is answered with (no board sends it): the lane retries, then skips, saying so. */
export const CLAIM_THREW = 'claim_threw';

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
  readonly run?: { prompt: string; agentId: string | null; timeoutS: number | null; repo?: string; base?: string };
  /** A granted claim whose answer was refused, naming the field: the run is completed as failed with it. */
  readonly invalid?: string;
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
  granted: (claim: GrantedClaim) => void = () => {
    // nobody to tell by default
  },
): EffectConsumer<ClaimEffect> {
  return {
    name: `claims-${computer}`,
    delivery: 'at-least-once',
    concurrency: RUN_EFFECTS_AT_ONCE,
    // Taken by the queue's decision that starts it (one process holds a computer's log), settled by its answer.
    implicit: {
      key: (effect) => `${effect.stream} ${effect.type === 'run.claim.started' ? effect.data.runId : ''}`,
      settles: (event) =>
        event.type === 'claim.answered' && parseStream(event.stream).owner === computer ? `${event.stream} ${event.data.runId}` : null,
    },
    effectOf: (event: DomainEvent) =>
      event.type === 'run.claim.started' && parseStream(event.stream).owner === computer
        ? { runId: event.data.runId, stream: event.stream, incarnation: event.data.incarnation }
        : null,
    async perform({ runId, stream, incarnation }) {
      // The life that started the claim, even when a later life repeats it after a restart. BoardClient
      // answers a network failure as status 0 and never throws: a throw (a bug, a token no header can
      // carry) is answered as a failed claim named `claim_threw`, so the lane retries it a bounded number
      // of times and then skips it, never holding it `claiming` for ever; its message goes to the log.
      let answer: Awaited<ReturnType<BoardClaims['claim']>>;
      try {
        answer = await board.claim(runId, incarnation);
      } catch (error) {
        await answered({ stream, runId, status: 0, code: CLAIM_THREW });
        // Recorded by the outbox too: the answer does not carry the message.
        return { ok: false, detail: `the claim call threw: ${messageOf(error)}` };
      }
      const code = errorCodeOf(answer.body);
      if (answer.status !== 200 && answer.status !== 201) {
        await answered({ stream, runId, status: answer.status, ...(code ? { code } : {}) });
        return { answered: `answered ${answer.status}${code ? ` ${code}` : ''}` };
      }
      const read = readClaimAnswer(runId, answer.body);
      if (!read.ok) {
        const { runToken, problem } = read;
        if (runToken === null) {
          // Without a run token the run can be neither run nor reported: a refusal, tried again.
          await answered({ stream, runId, status: 502, code: 'bad_claim_answer' });
          return { ok: false, detail: `the claim answer was refused: ${problem}` };
        }
        // Granted, so the run is this computer's to end: recorded with the field named, then completed
        // as failed with it, rather than held until the board's lease reaps it.
        granted({ runId, lane: null, runToken, skills: [] });
        await answered({ stream, runId, status: answer.status, invalid: problem });
        return { answered: `answered ${answer.status}, refused: ${problem}` };
      }
      const { claim } = read;
      granted(claim);
      await answered({ stream, runId, status: answer.status, skills: claim.skills.map((s) => s.key), run: claim.run });
      return { answered: `answered ${answer.status}` };
    },
  };
}

const safeIdOrNull = SafeId.nullable().optional().catch(null);

/** A 200 to a claim (docs/rules.md#wire-and-cli). An agent or lane that could name no folder is dropped, not refused. */
const GrantedBody = z.object({
  run_token: z.string().min(1),
  run: z.object({
    prompt: z.string(),
    agent_id: safeIdOrNull,
    lane: safeIdOrNull,
    timeout_s: TimeoutSeconds.nullable().optional(),
    repo: RepoName.nullable().optional(),
    base: BaseRef.nullable().optional(),
  }),
  skills: z.unknown().optional(),
});

const WithRunToken = z.object({ run_token: z.string().min(1) });

/** The run token of a claim's answer, whatever else it holds, or null when it has none. */
export function runTokenIn(body: unknown): string | null {
  const read = WithRunToken.safeParse(body);
  return read.success ? read.data.run_token : null;
}

export type ReadClaim =
  | { readonly ok: true; readonly claim: GrantedClaim & { run: NonNullable<ClaimAnswer['run']> } }
  /** `runToken`: the answer's token when it had a usable one (the run can still be reported). */
  | { readonly ok: false; readonly problem: string; readonly runToken: string | null };

/** A claim's 200 answer, read at the edge; a refusal names the first field at fault (`run.timeout_s: ...`). */
export function readClaimAnswer(runId: string, body: unknown): ReadClaim {
  const runToken = runTokenIn(body);
  const parsed = GrantedBody.safeParse(body ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? issue.path.join('.') : 'body';
    return { ok: false, problem: `${where}: ${issue?.message ?? 'invalid'}`.slice(0, 500), runToken };
  }
  const { run } = parsed.data;
  let skills: ReturnType<typeof parseSkills>;
  try {
    skills = parseSkills(parsed.data.skills);
  } catch (error) {
    return { ok: false, problem: `skills: ${messageOf(error)}`.slice(0, 500), runToken };
  }
  return {
    ok: true,
    claim: {
      runId,
      lane: run.lane ?? null,
      runToken: parsed.data.run_token,
      skills,
      run: {
        prompt: run.prompt,
        agentId: run.agent_id ?? null,
        timeoutS: run.timeout_s ?? null,
        ...(run.repo ? { repo: run.repo } : {}),
        ...(run.base ? { base: run.base } : {}),
      },
    },
  };
}
