import { inboxDecider } from '../../actors/board/inbox/inboxDecider.ts';
import type { PendingNotice } from '../../actors/board/inbox/inboxState.ts';
import { inboxStream, readInbox } from '../../actors/board/inbox/inboxStream.ts';
import { isSafeId } from '../../events/idRule.ts';
import { clock as clockTime } from '../../events/words.ts';
import { decideAndAppend, onlyStreamsRead } from '../../runtime/actors/decideAndAppend.ts';
import { retryOnConflict } from '../../runtime/actors/retryOnConflict.ts';
import type { EventStore } from '../../runtime/store/eventStore.ts';

export interface UnreadNotices {
  readonly notices: readonly PendingNotice[];
  /** Hand these over with `markHanded(…, through)`; 0 when there are none. */
  readonly through: number;
}

/** The notices filed for a session and not yet handed to its agent, oldest first. */
export async function unreadNotices(store: Pick<EventStore, 'readStream'>, sessionId: string): Promise<UnreadNotices> {
  if (!isSafeId(sessionId)) return { notices: [], through: 0 };
  const { state } = await readInbox(store, sessionId);
  return { notices: state.pending, through: state.pending.at(-1)?.n ?? 0 };
}

/**
 * What goes ahead of a turn's prompt: the notices, one a line, with when each thing happened (UTC),
 * then a blank line. Empty when there is nothing to tell. Pure.
 */
export function noticePrefix(notices: readonly PendingNotice[]): string {
  if (notices.length === 0) return '';
  const lines = notices.map((notice) => `- ${clockTime(notice.sourceAt)} UTC: ${notice.text}`);
  return `Since your last turn (${notices.length} notice${notices.length === 1 ? '' : 's'} from the board):\n${lines.join('\n')}\n\n`;
}

/**
 * Records that notices 1 to `through` were handed to the agent (put ahead of `runId`'s prompt): they
 * are not handed again. Appended at the inbox's version; a notice filed meanwhile only makes it retry.
 */
export async function markHanded(store: EventStore, sessionId: string, through: number, runId: string | null, at: number): Promise<void> {
  if (through <= 0) return;
  await retryOnConflict(
    async () => {
      const { state, versions } = await readInbox(store, sessionId);
      const outcome = await decideAndAppend(
        store,
        inboxDecider,
        state,
        { stream: inboxStream(sessionId), type: 'notices.handed', data: { sessionId, through, runId }, at },
        versions,
        onlyStreamsRead,
      );
      return outcome.ok ? undefined : outcome.conflict;
    },
    () => new Error(`the notices of session ${sessionId} could not be marked handed: its inbox kept changing`),
  );
}
