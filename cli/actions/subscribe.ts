import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import { NOTICE_KINDS, type NoticeKind } from '../../actors/board/inbox/noticeKinds.ts';
import { closeSubscription, openSubscription } from '../../apps/board/chores/notices/subscriptions.ts';
import { isSafeId, SAFE_ID_RULE } from '../../events/idRule.ts';
import { systemClock } from '../../runtime/actors/clock.ts';
import type { SubscribeOptions, UnsubscribeOptions } from '../commands/subscribe.ts';
import { openLog } from '../shared/openLog.ts';
import { print } from '../shared/options.ts';
import { refuseOption } from '../shared/parse.ts';

function checkId(what: string, id: string): void {
  if (!isSafeId(id)) throw new Error(`${what} ${JSON.stringify(id)} must match ${SAFE_ID_RULE}`);
}

/** `--kind`, repeatable: each one of NOTICE_KINDS, checked here where their schema loads (../parse.ts). */
function noticeKinds(texts: readonly string[], command: CommandUnknownOpts): NoticeKind[] {
  return texts.map((text) => {
    const kind = NOTICE_KINDS.find((k) => k === text);
    return kind ?? refuseOption(command, '--kind <kind>', text, `--kind wants one of ${NOTICE_KINDS.join(', ')}, not "${text}"`);
  });
}

/**
 * `runledger subscribe SESSION`: the session hears what the board decides from now on (runs of a lane
 * ending, by default), as notices filed in its inbox and handed to its agent ahead of its next prompt.
 */
export async function subscribe(session: string, options: SubscribeOptions, command: CommandUnknownOpts): Promise<void> {
  const asked = noticeKinds(options.kind ?? [], command);
  checkId('session', session);
  if (options.lane) checkId('lane', options.lane);
  if (options.id) checkId('subscription', options.id);
  const store = await openLog(options);
  try {
    const kinds: NoticeKind[] = asked.length ? [...new Set(asked)] : ['run.ended'];
    const { subscriptionId, from } = await openSubscription(store, systemClock, {
      sessionId: session,
      lane: options.lane ?? null,
      kinds,
      ...(options.id ? { subscriptionId: options.id } : {}),
    });
    print(
      options,
      { subscription_id: subscriptionId, session_id: session, lane: options.lane ?? null, kinds, from },
      () =>
        `subscription ${subscriptionId}: session ${session} hears ${kinds.join(', ')}${options.lane ? ` of lane ${options.lane}` : ''} from seq ${from + 1} on`,
    );
  } finally {
    await store.close();
  }
}

/** `runledger unsubscribe SESSION SUBSCRIPTION`: nothing more is filed for it. */
export async function unsubscribe(session: string, subscription: string, options: UnsubscribeOptions): Promise<void> {
  checkId('session', session);
  checkId('subscription', subscription);
  const store = await openLog(options, { mustExist: true });
  try {
    await closeSubscription(store, systemClock, session, subscription, 'closed with `runledger unsubscribe`');
    print(options, { subscription_id: subscription, closed: true }, () => `subscription ${subscription} of session ${session} closed`);
  } finally {
    await store.close();
  }
}
