import { Command } from '@commander-js/extra-typings';
import { type OptionsOf, withDb } from '../shared/options.ts';
import { collect } from '../shared/parse.ts';

/**
 * What `--kind` may name, for the help: NOTICE_KINDS, written out because their schema (zod) is not
 * loaded at every start (../parse.ts); test/cli/commandHelp.test.ts keeps the two the same.
 */
const KINDS = 'run.queued, run.claimed, run.started, run.ended, session.closed, lane.adopted, computer.online, computer.offline';

const subscribe = () =>
  withDb(new Command('subscribe'))
    .description("file notices of what the board decides (runs of a lane ending, by default) in a session's inbox, for its next turn")
    .argument('<session>', 'the session that hears')
    .option('--lane <lane>', 'only runs of this lane (board-level kinds are heard whatever the lane)')
    .option('--kind <kind>', `what it hears (repeatable): ${KINDS}; run.ended when none`, collect)
    .option('--id <id>', "the subscription's id (drawn when absent)");

const unsubscribe = () =>
  withDb(new Command('unsubscribe'))
    .description('close a subscription: nothing more is filed for it')
    .argument('<session>')
    .argument('<subscription>');

export type SubscribeOptions = OptionsOf<ReturnType<typeof subscribe>>;
export type UnsubscribeOptions = OptionsOf<ReturnType<typeof unsubscribe>>;

/** `runledger subscribe SESSION`; what it does is in ../actions/subscribe.ts, loaded when it runs. */
export function subscribeCommand() {
  return subscribe().action(async (session, options, command) => (await import('../actions/subscribe.ts')).subscribe(session, options, command));
}

export function unsubscribeCommand() {
  return unsubscribe().action(async (session, subscription, options) =>
    (await import('../actions/subscribe.ts')).unsubscribe(session, subscription, options),
  );
}
