import type { DomainEvent } from '../../../events/catalog.ts';

/** A segment retention moved out of the live log (docs/retention.md), with its deletion when there was one. */
export interface SegmentRecord {
  readonly from: number;
  readonly to: number;
  readonly file: string;
  readonly archivedAt: number;
  readonly deleted: { readonly at: number; readonly afterDays: number } | null;
}

/**
 * Every segment the `log:archive` stream's events say, oldest first: each `log.archived` names its own
 * and carries those before it (`earlier`), a `log.archive.deleted` marks one deleted. The events read
 * may be a tail of the stream (its older ones left with later cuts): the newest `log.archived` says all.
 */
export function segmentRecords(events: readonly DomainEvent[]): SegmentRecord[] {
  const segments = new Map<string, SegmentRecord>();
  for (const event of events) {
    if (event.type === 'log.archived') {
      for (const earlier of event.data.earlier ?? []) {
        const known = segments.get(earlier.file);
        segments.set(earlier.file, { ...earlier, deleted: known?.deleted ?? earlier.deleted });
      }
      const { from, to, file } = event.data;
      segments.set(file, { from, to, file, archivedAt: event.at, deleted: null });
    }
    if (event.type === 'log.archive.deleted') {
      const known = segments.get(event.data.file);
      if (known) segments.set(known.file, { ...known, deleted: { at: event.at, afterDays: event.data.afterDays } });
    }
  }
  return [...segments.values()].sort((a, b) => a.from - b.from);
}
