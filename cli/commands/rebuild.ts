import { Command } from 'commander';
import { projections } from '../../projections/registry.ts';
import { rebuildProjections } from '../../projections/rebuild.ts';
import { type DbOptions, openLog, print, withDb } from '../options.ts';

export function rebuildCommand(): Command {
  return withDb(new Command('rebuild'))
    .description('refold every projection from seq 0 and compare it with its stored checkpoint (exit 1 on a difference)')
    .option('--write', 'store the rebuilt states as the new checkpoints')
    .action(async (options: DbOptions & { write?: boolean }) => {
      const store = await openLog(options, { mustExist: true });
      try {
        const reports = await rebuildProjections(store, projections, { write: options.write ?? false });
        const equal = reports.every((r) => r.equal);
        print(options, { ok: equal, projections: reports }, () =>
          reports
            .map((r) =>
              r.equal
                ? `✓ ${r.projection}: ${r.checkpointSeq === null ? 'no checkpoint stored' : `equals its checkpoint at seq ${r.checkpointSeq}`}`
                : `✗ ${r.projection}: differs from its checkpoint at seq ${r.checkpointSeq}: ${r.detail}`,
            )
            .join('\n'),
        );
        process.exitCode = equal ? 0 : 1;
      } finally {
        await store.close();
      }
    });
}
