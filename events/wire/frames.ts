import * as z from 'zod';
import type { NewEventOf } from '../catalog.ts';

/** What a frame becomes on the computer: one of its queue's inputs. */
export type FrameInput = NewEventOf<'frame.received' | 'frame.refused'>;

import { SAFE_ID, SAFE_ID_RULE } from '../idRule.ts';

/** Frames above this size close the connection (WebSocket 1009); the computer reconnects. */
export const MAX_FRAME_BYTES = 256 * 1024;

/** A push frame from the board (docs/rules.md#wire-and-cli). Extra fields are tolerated: the board may grow. */
const FrameId = z.object({ id: z.string() });
const PushFrame = z.object({
  id: z.string().min(1).max(200),
  kind: z.string().min(1).max(100),
  data: z.object({
    run_id: z.string(),
    lane: z.string().optional(),
    computer_id: z.string().optional(),
    agent_id: z.string().nullable().optional(),
  }),
});

/**
 * The input a raw frame becomes: `frame.received` when it reads, `frame.refused` (answered 400) when
 * it does not. Never throws: a bad frame is recorded and answered, and the connection lives on.
 */
export function frameInput(computer: string, raw: string, at: number): FrameInput {
  const refuse = (frameId: string | null, reason: string): FrameInput => ({
    stream: `${computer}/computer:${computer}`,
    type: 'frame.refused',
    data: { frameId, reason, excerpt: raw.slice(0, 500) },
    at,
  });
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    // A SyntaxError, JSON.parse's only failure on text: refused and recorded, as a bad frame is.
    return refuse(null, 'the frame is not JSON');
  }
  const parsed = PushFrame.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    // The refusal names the frame when it has an id at all, so the board can tell which one it was.
    const named = FrameId.safeParse(value);
    const frameId = named.success ? named.data.id.slice(0, 200) : null;
    return refuse(frameId, `the frame has the wrong shape (${issue?.path.join('.') || 'frame'}: ${issue?.message ?? 'invalid'})`);
  }
  const { id, kind, data } = parsed.data;
  for (const [field, value] of [
    ['run_id', data.run_id],
    ['lane', data.lane],
    ['computer_id', data.computer_id],
    ['agent_id', data.agent_id ?? undefined],
  ] as const) {
    if (value !== undefined && !SAFE_ID.test(value))
      return refuse(id, `${field} ${JSON.stringify(value.slice(0, 80))} does not match ${SAFE_ID_RULE}`);
  }
  return {
    // A run's frame goes to its lane's stream; one that names no lane (a cancel) to the computer's.
    stream: data.lane ? `${computer}/lane:${data.lane}` : `${computer}/computer:${computer}`,
    type: 'frame.received',
    data: {
      frameId: id,
      kind,
      runId: data.run_id,
      ...(data.lane ? { lane: data.lane } : {}),
      ...(data.agent_id ? { agentId: data.agent_id } : {}),
      ...(data.computer_id ? { computerId: data.computer_id } : {}),
    },
    at,
  };
}
