import { Command } from '@commander-js/extra-typings';
import { helpAfter, type OptionsOf, withDb } from '../shared/options.ts';
import { parseSeq } from '../shared/parse.ts';
import type { ToolRegistry } from '../shared/registry.ts';

const replay = () =>
  withDb(new Command('replay'))
    .description('re-derive every recorded decision from its input (exit 1 naming the first seq that differs)')
    .option('--until <seq>', 'print every projection as of this seq, re-deriving the decisions from the nearest snapshot up to it', parseSeq)
    .option('--run <id>', 're-derive only the inputs that concern this run (its id or a unique prefix of it), each with its decisions')
    .option('--session <id>', 're-derive only the inputs that concern this session (its whole id), each with its decisions');

export type ReplayOptions = OptionsOf<ReturnType<typeof replay>>;

/** `runledger replay`; what it does is in ../actions/replay.ts, loaded when it runs. A test may hand it the registry of its fixtures. */
export function replayCommand(registry?: ToolRegistry) {
  return helpAfter(
    replay(),
    ['runledger replay', 'runledger replay --run 2397a925', 'runledger replay --until 120 --json'],
    'a decision re-derives differently (its seq is named)',
  ).action(async (options) => (await import('../actions/replay.ts')).replay(options, registry));
}
