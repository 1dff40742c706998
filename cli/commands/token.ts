import { Command } from '@commander-js/extra-typings';
import { helpAfter, ID_RULE_HELP, type OptionsOf, withDb } from '../shared/options.ts';

const add = () =>
  withDb(new Command('add'))
    .description('make a submit token (for submit and cancel) and print it, once: the log keeps only its hash')
    .argument('<name>', `what the token is for, e.g. who holds it (${ID_RULE_HELP})`);

const revoke = () =>
  withDb(new Command('revoke'))
    .description('withdraw a submit token the log recorded: every board of the log refuses it from then on; its name stays taken')
    .argument('<name>', 'the name it was added under');

export type TokenAddOptions = OptionsOf<ReturnType<typeof add>>;
export type TokenRevokeOptions = OptionsOf<ReturnType<typeof revoke>>;

/** `runledger token add NAME` and `token revoke NAME` (docs/rules.md#postgresql-board); what it does is in ../actions/token.ts, loaded when it runs. */
export function tokenCommand() {
  return new Command('token')
    .description('submit tokens of a board (the only ones a board on PostgreSQL takes)')
    .addCommand(
      helpAfter(add(), ['runledger token add ci --db postgres://runledger@db.example/runledger --json', 'runledger token add alice']).action(
        async (name, options) => (await import('../actions/token.ts')).addToken(name, options),
      ),
    )
    .addCommand(
      helpAfter(revoke(), ['runledger token revoke ci --db postgres://runledger@db.example/runledger', 'runledger token revoke alice']).action(
        async (name, options) => (await import('../actions/token.ts')).revokeToken(name, options),
      ),
    );
}
