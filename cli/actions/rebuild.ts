import type { AnyProjection } from '../../projections/projection.ts';
import { storedDeciderProjections } from '../../replay/deciderStates.ts';
import { checkOutboxMarks, type MarkCheck } from '../../runtime/folds/snapshot/checkOutboxMarks.ts';
import { type ProjectionCheck, type RebuildCheck, rebuildAndCheck } from '../../runtime/folds/snapshot/checkSnapshots.ts';
import type { RebuildOptions } from '../commands/rebuild.ts';
import { failOnForeignRow, openLog, openLogToRead } from '../shared/openLog.ts';
import { print } from '../shared/options.ts';
import { productionRegistry, type ToolRegistry } from '../shared/registry.ts';

/** `runledger rebuild [--write]`: every projection refolded from seq 0 and compared with what is stored. */
export async function rebuild(options: RebuildOptions, { codec, deciders, projections }: ToolRegistry = productionRegistry): Promise<void> {
  // Read-only unless asked to store what it rebuilt.
  const store = options.write ? await openLog(options, { mustExist: true, foreignRows: 'fail', codec }) : await openLogToRead(options, 'fail', codec);
  try {
    // The deciders' states, which `replay` snapshots, are checked like any projection.
    const all: AnyProjection[] = [...projections, ...storedDeciderProjections(deciders)];
    const rebuilt = await rebuildAndCheck(store, all, { write: options.write ?? false, checkpointed: new Set(projections) });
    // The outboxes' marks are checked against the log as well: their cursors move in them (docs/rules.md#projections).
    const marks = await checkOutboxMarks(store);
    const result = { ...rebuilt, ok: rebuilt.ok && marks.every((m) => m.problem === undefined), marks };
    print(options, result, () => formatRebuild(result));
    process.exitCode = result.ok ? 0 : 1;
  } catch (error) {
    failOnForeignRow(options, error);
  } finally {
    await store.close();
  }
}

function formatRebuild(result: RebuildCheck & { readonly marks: readonly MarkCheck[] }): string {
  const lines = [...result.projections.map(line), ...result.marks.map(markLine)];
  if (result.firstDifference) {
    const d = result.firstDifference;
    lines.push(`first difference: ${d.projection}, its ${d.source === 'checkpoint' ? 'checkpoint' : 'snapshot'} at seq ${d.seq}`);
  }
  if (result.ignored.length) lines.push(`not checked (no projection of that name and version now): ${result.ignored.join(', ')}`);
  if (result.written) {
    const { snapshots, checkpoints } = result.written;
    lines.push(
      `stored: ${checkpoints.length} checkpoint(s) at seq ${result.head}${snapshots.length ? `, snapshots at seq ${snapshots.join(', ')}` : ''}`,
    );
  }
  return lines.join('\n');
}

function markLine(m: MarkCheck): string {
  if (m.problem !== undefined) return `✗ ${m.mark}: its mark at seq ${m.seq} disagrees with the log: ${m.problem}`;
  if (m.unread) return `✓ ${m.mark}: its mark at seq ${m.seq} is of another shape, never read (its stream is folded from the start)`;
  return `✓ ${m.mark}: its mark at seq ${m.seq} agrees with the log`;
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
