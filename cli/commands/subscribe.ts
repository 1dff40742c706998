import { Command, InvalidArgumentError } from 'commander';
import { NOTICE_KINDS, type NoticeKind } from '../../actors/board/inbox/noticeKinds.ts';
import { closeSubscription, openSubscription } from '../../actors/board/chores/notices/subscriptions.ts';
import { systemClock } from '../../actors/runtime/clock.ts';
import { SAFE_ID_RULE, isSafeId } from '../../events/safeId.ts';
import { type DbOptions, openLog, print, withDb } from '../options.ts';

function checkId(what: string, id: string): void {
  if (!isSafeId(id)) throw new Error(`${what} ${JSON.stringify(id)} must match ${SAFE_ID_RULE}`);
}

function collectKind(text: string, previous: NoticeKind[]): NoticeKind[] {
  if (!(NOTICE_KINDS as readonly string[]).includes(text)) throw new InvalidArgumentError(`--kind wants one of ${NOTICE_KINDS.join(', ')}, not "${text}"`);
  return [...previous, text as NoticeKind];
}

/**
 * `runledger subscribe SESSION`: the session hears what the board decides from now on (runs of a lane
 * ending, by default), as notices filed in its inbox and handed to its agent ahead of its next prompt.
 */
export function subscribeCommand(): Command {
  return withDb(new Command('subscribe'))
    .description('file notices of what the board decides (runs of a lane ending, by default) in a session\'s inbox, for its next turn')
    .argument('<session>', 'the session that hears')
    .option('--lane <lane>', 'only runs of this lane (board-level kinds are heard whatever the lane)')
    .option('--kind <kind>', `what it hears (repeatable): ${NOTICE_KINDS.join(', ')}; run.ended when none`, collectKind, [])
    .option('--id <id>', 'the subscription\'s id (drawn when absent)')
    .action(async (session: string, options: DbOptions & { lane?: string; kind: NoticeKind[]; id?: string }) => {
      checkId('session', session);
      if (options.lane) checkId('lane', options.lane);
      if (options.id) checkId('subscription', options.id);
      const store = await openLog(options);
      try {
        const kinds: NoticeKind[] = options.kind.length ? [...new Set(options.kind)] : ['run.ended'];
        const { subscriptionId, from } = await openSubscription(store, systemClock, {
          sessionId: session,
          lane: options.lane ?? null,
          kinds,
          ...(options.id ? { subscriptionId: options.id } : {}),
        });
        print(options, { subscription_id: subscriptionId, session_id: session, lane: options.lane ?? null, kinds, from }, () =>
          `subscription ${subscriptionId}: session ${session} hears ${kinds.join(', ')}${options.lane ? ` of lane ${options.lane}` : ''} from seq ${from + 1} on`,
        );
      } finally {
        await store.close();
      }
    });
}

export function unsubscribeCommand(): Command {
  return withDb(new Command('unsubscribe'))
    .description('close a subscription: nothing more is filed for it')
    .argument('<session>')
    .argument('<subscription>')
    .action(async (session: string, subscription: string, options: DbOptions) => {
      checkId('session', session);
      checkId('subscription', subscription);
      const store = await openLog(options, { mustExist: true });
      try {
        await closeSubscription(store, systemClock, session, subscription, 'closed with `runledger unsubscribe`');
        print(options, { subscription_id: subscription, closed: true }, () => `subscription ${subscription} of session ${session} closed`);
      } finally {
        await store.close();
      }
    });
}
