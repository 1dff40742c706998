import { LOG_ARCHIVE_STREAM } from '../../../events/logEvents.ts';
import type { EventStore } from '../eventStore.ts';
import { type SegmentRecord, segmentRecords } from './archiveRecords.ts';

/** Every segment the log records, oldest first (none when retention never ran). */
export async function archivedSegments(store: Pick<EventStore, 'readStream'>): Promise<SegmentRecord[]> {
  return segmentRecords(await store.readStream(LOG_ARCHIVE_STREAM));
}

const utc = (at: number) => new Date(at).toISOString().replace('T', ' ');

/** The segments holding any of `seqs`: where an audited run's older history is kept. */
export function segmentsHolding(segments: readonly SegmentRecord[], seqs: readonly number[]): SegmentRecord[] {
  return segments.filter((s) => seqs.some((seq) => seq >= s.from && seq <= s.to));
}

/**
 * One line a segment: `archived in archive/FILE (events A..B, on DATE)`, and its deletion: recorded, or
 * (`missing`) its file gone without a record, removed by hand.
 */
export function describeSegment(segment: SegmentRecord, missing = false): string {
  const deleted = segment.deleted
    ? `; deleted on ${utc(segment.deleted.at)} (--delete-archives-after-days ${segment.deleted.afterDays})`
    : missing
      ? '; its file is missing: it was deleted or moved outside runledger (put it back in archive/ to read that history)'
      : '';
  return `archived in archive/${segment.file} (events ${segment.from}..${segment.to}, on ${utc(segment.archivedAt)})${deleted}`;
}
