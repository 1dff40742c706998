import { Command } from '@commander-js/extra-typings';
import { helpAfter, ID_RULE_HELP, type OptionsOf, withDb } from '../shared/options.ts';
import { collect } from '../shared/parse.ts';

/**
 * What `--kind` may name, for the help: NOTICE_KINDS, written out because their schema (zod) is not
 * loaded at every start (../parse.ts); test/cli/commandHelp.test.ts keeps the two the same.
 */
const KINDS = 'run.queued, run.claimed, run.started, run.ended, session.closed, lane.adopted, computer.online, computer.offline';

const subscribe = () =>
  withDb(new Command('subscribe'))
    .description("file notices of what the board decides (runs of a lane ending, by default) in a session's inbox, for its next turn")
    .argument('<session>', `the session that hears (${ID_RULE_HELP})`)
    .option('--lane <lane>', `only runs of this lane (board-level kinds are heard whatever the lane; ${ID_RULE_HELP})`)
    .option('--kind <kind>', `what it hears (repeatable): ${KINDS}; run.ended when none`, collect)
    .option('--id <id>', `the subscription's id (drawn when absent; ${ID_RULE_HELP})`);

const unsubscribe = () =>
  withDb(new Command('unsubscribe'))
    .description('close a subscription: nothing more is filed for it')
    .argument('<session>', `the session (${ID_RULE_HELP})`)
    .argument('<subscription>', `the subscription's id, as subscribe printed it (${ID_RULE_HELP})`);

export type SubscribeOptions = OptionsOf<ReturnType<typeof subscribe>>;
export type UnsubscribeOptions = OptionsOf<ReturnType<typeof unsubscribe>>;

/** `runledger subscribe SESSION`; what it does is in ../actions/subscribe.ts, loaded when it runs. */
export function subscribeCommand() {
  return helpAfter(subscribe(), [
    'runledger subscribe 7f3c2a1e-session --lane alice',
    'runledger subscribe 7f3c2a1e-session --kind run.ended --kind computer.offline',
  ]).action(async (session, options, command) => (await import('../actions/subscribe.ts')).subscribe(session, options, command));
}

export function unsubscribeCommand() {
  return helpAfter(unsubscribe(), ['runledger unsubscribe 7f3c2a1e-session sub-1']).action(async (session, subscription, options) =>
    (await import('../actions/subscribe.ts')).unsubscribe(session, subscription, options),
  );
}
