import { Command } from '@commander-js/extra-typings';
import { MAX_TIMEOUT_S } from '../../events/bounds.ts';
import { helpAfter, type OptionsOf, withLog } from '../shared/options.ts';
import { atMost, int } from '../shared/parse.ts';

const doctor = () =>
  withLog(
    new Command('doctor').description(
      'check an agent command as the daemon will run it (program, answer format, session, resume), and the repository its lanes work in, writing nothing; says what to fix',
    ),
    "the daemon's log: the turns run in a scratch folder beside its workspaces, removed afterwards",
  )
    .option('--exec <command>', 'the agent command line, as given to `runledger daemon --exec`: required, unless --demo')
    .option('--demo', 'check the demo agent (unless --exec)')
    .option(
      '--repo <path>',
      "the repository the daemon's lanes work in (daemon --repo): checked, and the agent run in a scratch worktree of it, removed afterwards",
    )
    .option(
      '--timeout-s <s>',
      `the budget of each of its two turns (0 = none, at most ${MAX_TIMEOUT_S})`,
      atMost('--timeout-s', MAX_TIMEOUT_S, int('--timeout-s', 0)),
      120,
    )
    .option('--json', 'print the checks as JSON, for scripts');

export type DoctorOptions = OptionsOf<ReturnType<typeof doctor>>;

/** `runledger doctor`; what it does is in ../actions/doctor.ts, loaded when it runs. */
export function doctorCommand() {
  return helpAfter(
    doctor(),
    [
      'runledger doctor --exec claude',
      'runledger doctor --repo ~/src/app --exec codex',
      'runledger doctor --exec "codex exec --skip-git-repo-check" --json',
    ],
    'a check failed (each says what to fix)',
  ).action(async (options) => (await import('../actions/doctor.ts')).doctor(options));
}
