import { Command } from '@commander-js/extra-typings';
import { helpAfter, ID_RULE_HELP, type OptionsOf, withDb } from '../shared/options.ts';

const add = () =>
  withDb(new Command('add'))
    .description('create a computer and print its token, once (the board keeps only its hash)')
    .argument('<id>', `the computer's id (${ID_RULE_HELP})`);

const list = () =>
  withDb(new Command('list')).description('the computers of this board: which are connected since when, and when the others were last seen');

export type ComputerAddOptions = OptionsOf<ReturnType<typeof add>>;
export type ComputerListOptions = OptionsOf<ReturnType<typeof list>>;

/** `runledger computer add|list`; what they do is in ../actions/computer.ts, loaded when one runs. */
export function computerCommand() {
  return new Command('computer')
    .description('computers that may claim runs from this board')
    .addCommand(
      helpAfter(add(), ['runledger computer add c2 --db /var/lib/runledger/runledger.db']).action(async (id, options) =>
        (await import('../actions/computer.ts')).addComputer(id, options),
      ),
    )
    .addCommand(
      helpAfter(list(), ['runledger computer list --json']).action(async (options) =>
        (await import('../actions/computer.ts')).listComputers(options),
      ),
    );
}
