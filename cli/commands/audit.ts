import { Command } from '@commander-js/extra-typings';
import { helpAfter, type OptionsOf, withBoardAddress, withDb } from '../shared/options.ts';

const audit = () =>
  withBoardAddress(withDb(new Command('audit')))
    .description(
      'the timeline of a run (or session): every event of it in order, each with a one-line reason (exit 1 when the log has none); ' +
        "with no id, the audit summary of the whole log; a run's timeline comes from the board (--server) when this machine has no log",
    )
    .argument('[id]', 'the run id (or a unique prefix of it, 6 characters or more) or session id to explain; none for the summary')
    .option('--summary', 'the audit summary of the whole log: runs by outcome, time queued and parked per lane, claims retried');

export type AuditOptions = OptionsOf<ReturnType<typeof audit>>;

/** `runledger audit [ID]`; what it does is in ../actions/audit.ts, loaded when it runs. */
export function auditCommand() {
  return helpAfter(audit(), ['runledger audit 2397a925', 'runledger audit --summary --json'], 'no run or session of that id in the log').action(
    async (id, options) => (await import('../actions/audit.ts')).audit(id, options),
  );
}
