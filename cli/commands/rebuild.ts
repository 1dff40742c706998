import { Command } from '@commander-js/extra-typings';
import { helpAfter, type OptionsOf, withDb } from '../shared/options.ts';
import type { ToolRegistry } from '../shared/registry.ts';

const rebuild = () =>
  withDb(new Command('rebuild'))
    .description('refold every projection from seq 0 and compare it with its stored checkpoint and every stored snapshot (exit 1 on a difference)')
    .option('--write', 'store the rebuilt states: checkpoints at the head, and snapshots (the deciders’ states too) at intervals');

export type RebuildOptions = OptionsOf<ReturnType<typeof rebuild>>;

/** `runledger rebuild`; what it does is in ../actions/rebuild.ts, loaded when it runs. A test may hand it the registry of its fixtures. */
export function rebuildCommand(registry?: ToolRegistry) {
  return helpAfter(rebuild(), ['runledger rebuild', 'runledger rebuild --write'], 'a projection differs from its rebuild').action(async (options) =>
    (await import('../actions/rebuild.ts')).rebuild(options, registry),
  );
}
