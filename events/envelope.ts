import { SAFE_ID_PART } from './idRule.ts';

/**
 * The shapes every event has, whatever its type: as proposed by a decider (`NewEvent`) and as read
 * back from the log (`StoredEvent`). The columns mirror docs/rules.md#the-log one to one.
 */

/** A decision's cause: the seq of a committed event, or an earlier event of the same append. */
export type Cause = number | { readonly inBatch: number } | null;

export interface NewEvent<T extends string = string, D = unknown> {
  readonly stream: string;
  readonly type: T;
  readonly data: D;
  /** ms since epoch, from the writer's clock: the input's `at` for a decision. */
  readonly at: number;
  readonly cause?: Cause;
}

export interface StoredEvent<T extends string = string, D = unknown> {
  readonly seq: number;
  readonly stream: string;
  readonly version: number;
  readonly type: T;
  readonly data: D;
  readonly at: number;
  readonly cause: number | null;
  /** `host:pid` of the process that wrote it. */
  readonly actor: string;
}

/** Every stream name has a kind before its first colon; a computer's streams carry its id first. */
export const STREAM_NAME = new RegExp(`^(?:${SAFE_ID_PART}/)?[a-z]+:${SAFE_ID_PART}$`);

export function parseStream(stream: string): { owner: string | null; kind: string; id: string } {
  const slash = stream.indexOf('/');
  const owner = slash === -1 ? null : stream.slice(0, slash);
  const rest = slash === -1 ? stream : stream.slice(slash + 1);
  const colon = rest.indexOf(':');
  return { owner, kind: rest.slice(0, colon), id: rest.slice(colon + 1) };
}
