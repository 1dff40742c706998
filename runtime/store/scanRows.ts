import type { FoldRow } from './eventStore.ts';

/** A fold's columns of a row, in the order both stores select them. */
export type FoldColumns = [seq: number, stream: string, type: string, data: string, at: number, cause: number | null];

/**
 * EventStore.scanRows for either store: `visit` gets each row after `after`, at most `limit`, read
 * `chunk` rows at a time by `read` (few alive at once, so the garbage collector has little to move),
 * in one row object it reuses.
 */
export async function scanInChunks(
  after: number,
  limit: number,
  chunk: number,
  read: (last: number, size: number) => FoldColumns[] | Promise<FoldColumns[]>,
  visit: (row: FoldRow) => void,
): Promise<number> {
  const row: FoldRow = { seq: 0, stream: '', type: '', data: '', at: 0, cause: null };
  let count = 0;
  let last = after;
  while (count < limit) {
    const size = Math.min(chunk, limit - count);
    const rows = await read(last, size);
    for (const [seq, stream, type, data, at, cause] of rows) {
      row.seq = seq;
      row.stream = stream;
      row.type = type;
      row.data = data;
      row.at = at;
      row.cause = cause;
      visit(row);
    }
    count += rows.length;
    if (rows.length < size) break;
    last = row.seq;
  }
  return count;
}
