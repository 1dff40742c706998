import type { NoticeKind } from './noticeKinds.ts';

export interface InboxSubscription {
  readonly lane: string | null;
  readonly kinds: readonly NoticeKind[];
  /** Every event it hears up to this seq is filed: its notification cursor. */
  cursor: number;
  closed: boolean;
}

/** A notice filed and not yet handed to the agent. */
export interface PendingNotice {
  readonly n: number;
  readonly text: string;
  readonly sourceAt: number;
}

/** One session's inbox, folded from `inbox:<sessionId>`. */
export interface InboxState {
  readonly sessionId: string;
  subscriptions: Record<string, InboxSubscription>;
  /** Notices filed so far: the next one is `filed + 1`. */
  filed: number;
  /** Notices 1 to `handed` were handed to the agent. */
  handed: number;
  pending: PendingNotice[];
  /** What the board last said about notices it could not file, until the next filing: said once. */
  said: 'waiting' | 'withheld' | null;
}

export function initialInboxState(sessionId: string): InboxState {
  return { sessionId, subscriptions: {}, filed: 0, handed: 0, pending: [], said: null };
}
