import { Command } from '@commander-js/extra-typings';
import { helpAfter, ID_RULE_HELP, type OptionsOf, withDb } from '../shared/options.ts';

const adopt = () =>
  withDb(new Command('adopt'))
    .description(
      "ask the board to bind a live session to a lane: its next turns then run in that session (the running daemon's board binds it; refused when none runs on --db)",
    )
    .argument('<lane>', `the lane (a conversation; ${ID_RULE_HELP})`)
    .argument('[session]', `the session id to adopt (${ID_RULE_HELP})`)
    .option('--release', "withdraw the lane's open adoption request instead");

export type AdoptOptions = OptionsOf<ReturnType<typeof adopt>>;

/** `runledger adopt LANE SESSION`; what it does is in ../actions/adopt.ts, loaded when it runs. */
export function adoptCommand() {
  return helpAfter(adopt(), ['runledger adopt alice 7f3c2a1e-session', 'runledger adopt alice --release']).action(async (lane, session, options) =>
    (await import('../actions/adopt.ts')).adopt(lane, session, options),
  );
}
