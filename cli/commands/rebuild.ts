import { Command } from 'commander';
import { storedDeciderProjections } from '../../replay/deciderStates.ts';
import type { AnyProjection } from '../../projections/projection.ts';
import { type ProjectionCheck, type RebuildCheck, rebuildAndCheck } from '../../projections/snapshot/checkSnapshots.ts';
import { type DbOptions, failOnForeignRow, openLog, openLogToRead, print, withDb } from '../options.ts';
import { productionRegistry, type ToolRegistry } from '../registry.ts';

export function rebuildCommand({ codec, deciders, projections }: ToolRegistry = productionRegistry): Command {
  return withDb(new Command('rebuild'))
    .description('refold every projection from seq 0 and compare it with its stored checkpoint and every stored snapshot (exit 1 on a difference)')
    .option('--write', 'store the rebuilt states: checkpoints at the head, and snapshots (the deciders’ states too) at intervals')
    .action(async (options: DbOptions & { write?: boolean }) => {
      // Read-only unless asked to store what it rebuilt.
      const store = options.write ? await openLog(options, { mustExist: true, foreignRows: 'fail', codec }) : await openLogToRead(options, 'fail', codec);
      try {
        // The deciders' states, which `replay` snapshots, are checked like any projection.
        const all: AnyProjection[] = [...projections, ...storedDeciderProjections(deciders)];
        const result = await rebuildAndCheck(store, all, { write: options.write ?? false, checkpointed: new Set(projections) });
        print(options, result, () => formatRebuild(result));
        process.exitCode = result.ok ? 0 : 1;
      } catch (error) {
        failOnForeignRow(options, error);
      } finally {
        await store.close();
      }
    });
}

function formatRebuild(result: RebuildCheck): string {
  const lines = result.projections.map(line);
  if (result.firstDifference) {
    const d = result.firstDifference;
    lines.push(`first difference: ${d.projection}, its ${d.source === 'checkpoint' ? 'checkpoint' : 'snapshot'} at seq ${d.seq}`);
  }
  if (result.ignored.length) lines.push(`not checked (no projection of that name and version now): ${result.ignored.join(', ')}`);
  if (result.written) {
    const { snapshots, checkpoints } = result.written;
    lines.push(`stored: ${checkpoints.length} checkpoint(s) at seq ${result.head}${snapshots.length ? `, snapshots at seq ${snapshots.join(', ')}` : ''}`);
  }
  return lines.join('\n');
}

function line(r: ProjectionCheck): string {
  const snapshots = r.snapshots.filter((s) => s.source === 'history');
  if (!r.equal) {
    const wrong = r.snapshots.find((s) => !s.equal)!;
    return `✗ ${r.projection}: differs from its ${wrong.source === 'checkpoint' ? 'checkpoint' : 'snapshot'} at seq ${wrong.seq}: ${wrong.detail}`;
  }
  const parts = [
    ...(r.checkpointSeq === null ? [] : [`its checkpoint at seq ${r.checkpointSeq}`]),
    ...(snapshots.length ? [`${snapshots.length} snapshot(s) (seq ${snapshots.map((s) => s.seq).join(', ')})`] : []),
  ];
  return `✓ ${r.projection}: ${parts.length ? `equals ${parts.join(' and ')}` : 'no checkpoint stored'}`;
}
