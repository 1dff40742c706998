import type { DomainEvent } from '../../events/catalog.ts';
import { parseStream } from '../../events/envelope.ts';
import type { EffectConsumer } from '../outbox/outbox.ts';
import { errorCodeOf } from '../queue/claimAnswer.ts';

/** The board's claim call, as the computer sees it (the HTTP client in production, a stand-in in tests). */
export interface BoardClaims {
  /** `status` 0 for a network error; `body` the parsed JSON answer, when there was one. */
  claim(runId: string): Promise<{ status: number; body?: unknown }>;
}

export interface ClaimAnswer {
  readonly runId: string;
  readonly status: number;
  readonly code?: string;
  readonly skills?: string[];
}

const SKILL_KEY = /^[A-Za-z0-9-]{1,64}$/;

/**
 * Claims are calls to the board, idempotent on run_id: taken at least once from the outbox. A crash
 * between the call and the recorded answer repeats the call, and the board answers 200 again with
 * the same run token.
 */
export function claimConsumer(computer: string, board: BoardClaims, answered: (answer: ClaimAnswer) => Promise<void>): EffectConsumer<string> {
  return {
    name: `claims-${computer}`,
    delivery: 'at-least-once',
    effectOf: (event: DomainEvent) =>
      event.type === 'run.claim.started' && parseStream(event.stream).owner === computer ? event.data.runId : null,
    async perform(runId) {
      let answer: { status: number; body?: unknown };
      try {
        answer = await board.claim(runId);
      } catch {
        answer = { status: 0 };
      }
      const code = errorCodeOf(answer.body);
      const skills = answer.status === 200 || answer.status === 201 ? skillKeysOf(answer.body) : undefined;
      if (skills === null) {
        await answered({ runId, status: 502, code: 'bad_skills' });
        return { ok: false, detail: 'the claim answer named a skill whose key could name no folder' };
      }
      await answered({ runId, status: answer.status, ...(code ? { code } : {}), ...(skills ? { skills } : {}) });
      return { ok: true, detail: `answered ${answer.status}${code ? ` ${code}` : ''}` };
    },
  };
}

/** The skills' keys; null when one could escape the workspace (it names a folder). */
function skillKeysOf(body: unknown): string[] | null {
  const skills = (body as { skills?: unknown } | undefined)?.skills;
  if (!Array.isArray(skills)) return [];
  const keys = skills.map((s) => (s as { key?: unknown } | null)?.key);
  return keys.every((k): k is string => typeof k === 'string' && SKILL_KEY.test(k)) ? keys : null;
}
