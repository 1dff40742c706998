import { Command } from '@commander-js/extra-typings';
import { type OptionsOf, withDb } from '../shared/options.ts';

const adopt = () =>
  withDb(new Command('adopt'))
    .description('ask the board to bind a live session to a lane: its next turns then run in that session')
    .argument('<lane>', 'the lane (a conversation)')
    .argument('[session]', 'the session id to adopt')
    .option('--release', "withdraw the lane's open adoption request instead");

export type AdoptOptions = OptionsOf<ReturnType<typeof adopt>>;

/** `runledger adopt LANE SESSION`; what it does is in ../actions/adopt.ts, loaded when it runs. */
export function adoptCommand() {
  return adopt().action(async (lane, session, options) => (await import('../actions/adopt.ts')).adopt(lane, session, options));
}
