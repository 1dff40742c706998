import { Command } from '@commander-js/extra-typings';
import { helpAfter, ID_RULE_HELP, type OptionsOf, withDb } from '../shared/options.ts';

const close = () =>
  withDb(new Command('close'))
    .description(
      "remove a lane's worktrees (daemon --repo) and keep their branches: uncommitted changes are first committed to the branch; refused while a turn of the lane is under way",
    )
    .argument('<lane>', `the lane (${ID_RULE_HELP})`);

export type LaneCloseOptions = OptionsOf<ReturnType<typeof close>>;

/**
 * `runledger lane close LANE`, a subcommand of `runledger lane LANE` (commands/client.ts: the transcript);
 * what it does is in ../actions/lane.ts, loaded when it runs.
 */
export function laneCloseCommand() {
  return helpAfter(close(), ['runledger lane close alice'], undefined).action(async (lane, options) =>
    (await import('../actions/lane.ts')).closeLane(lane, options),
  );
}
