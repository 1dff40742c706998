import { basename } from 'node:path';
import Database from 'better-sqlite3';
import type { DomainEvent } from '../../../events/catalog.ts';
import type { CheckpointEntry } from '../../../projections/startingCheckpoint.ts';
import { zlib } from '../../lazyBuiltins.ts';
import type { SqliteEventStore } from './sqliteEventStore.ts';

/**
 * The pure fold of a starting checkpoint (docs/retention.md#starting-checkpoints), handed to the store
 * by its caller (the folds are the product's, not the store's): from the states at the previous cut
 * (null: the log's start), it folds the events given and says which folds it could not carry on.
 */
export type CheckpointFold = (prior: readonly CheckpointEntry[] | null) => {
  readonly missing: readonly string[];
  visit(event: DomainEvent): void;
  entries(): CheckpointEntry[];
};

/** The starting checkpoint a log file holds at `seq`: null when it holds none (or has no such table). */
export function readCheckpoint(db: Database.Database, seq: number): CheckpointEntry[] | null {
  const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'starting_checkpoint'").pluck().get();
  if (table === undefined) return null;
  const rows = db
    .prepare<[number], { name: string; version: number; state: string | Buffer }>(
      'SELECT name, version, state FROM starting_checkpoint WHERE seq = ? ORDER BY name',
    )
    .all(seq);
  return rows.length
    ? rows.map((r) => ({ ...r, state: typeof r.state === 'string' ? r.state : zlib().inflateRawSync(r.state).toString('utf8') }))
    : null;
}

/**
 * Kept deflated: most of a checkpoint is the ids of every run ever settled (the run decider's retired
 * states), which deflate to a third, and the live log carries one checkpoint in its size.
 */
function saveCheckpoint(db: Database.Database, seq: number, entries: readonly CheckpointEntry[]): void {
  const insert = db.prepare<[string, number, number, Buffer]>(
    'INSERT OR REPLACE INTO starting_checkpoint (name, version, seq, state) VALUES (?, ?, ?, ?)',
  );
  db.transaction(() => {
    for (const e of entries) insert.run(e.name, e.version, seq, zlib().deflateRawSync(e.state));
  }).immediate();
}

/** Drops the live log's checkpoints older than the one at its first event: their rows have left. */
export function pruneCheckpoints(store: SqliteEventStore): void {
  const first = store.db.prepare<[], number | null>('SELECT min(seq) FROM events').pluck().get();
  if (first != null) store.db.prepare<[number]>('DELETE FROM starting_checkpoint WHERE seq < ?').run(first - 1);
}

/**
 * Step 1 of a cut: the states at `to`, folded from those at `first - 1` over the rows leaving, saved in
 * the live log. When the live log holds none at `first - 1` that the folds can carry on (a log cut by a
 * runledger before starting checkpoints), they are folded from seq 1 if the archives hold the whole
 * history, and kept at `first - 1` too; else the folds that cannot be carried on are left out.
 * Returns the folds left out.
 */
export async function saveCheckpointAtCut(store: SqliteEventStore, first: number, to: number, fold: CheckpointFold): Promise<readonly string[]> {
  let prior = first === 1 ? null : readCheckpoint(store.db, first - 1);
  if (first > 1 && (prior === null || fold(prior).missing.length > 0) && wholeHistoryBefore(store, first)) {
    const fromStart = fold(null);
    await foldRows(store, 0, first - 1, fromStart);
    prior = fromStart.entries();
    saveCheckpoint(store.db, first - 1, prior);
  }
  const folder = fold(first === 1 ? null : (prior ?? []));
  await foldRows(store, first - 1, to, folder);
  saveCheckpoint(store.db, to, folder.entries());
  return folder.missing;
}

/** Whether the archives hold every row before `first`, from seq 1, with no segment missing. */
function wholeHistoryBefore(store: SqliteEventStore, first: number): boolean {
  let next = 1;
  for (const segment of store.archives?.list(first) ?? []) {
    if (segment.from !== next) return false;
    next = segment.to + 1;
  }
  return next === first;
}

async function foldRows(store: SqliteEventStore, after: number, through: number, folder: ReturnType<CheckpointFold>): Promise<void> {
  for (let last = after; last < through; ) {
    const page = await store.readAll(last, Math.min(2000, through - last));
    if (page.length === 0) return;
    for (const event of page) if (event.seq <= through) folder.visit(event);
    last = page.at(-1)!.seq;
    // The daemon's other work gets the event loop between pages: a day's rows may be many.
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/** A stretch of the history read without a gap, and the starting checkpoint a replay of it starts from. */
export interface Stretch {
  readonly from: number;
  /** The last seq of the stretch (infinity: through the live log's end). */
  readonly to: number;
  /** Where its first event is: `archive/FILE`, or the log file given. */
  readonly where: string;
  /** The states at `from - 1`; null when `from` is 1 (every fold from its initial state) or none is kept. */
  readonly checkpoint: readonly CheckpointEntry[] | null;
}

/**
 * The history a replay of this log can read, as stretches without a gap (docs/retention.md#replay-and-audit-of-an-archive):
 * the archives still there, then the live log; a stretch starts where the one before it ends, or at a
 * segment whose older neighbours were deleted, from that file's starting checkpoint.
 */
export function replayStretches(store: SqliteEventStore, path: string): Stretch[] {
  const liveFirst = store.db.prepare<[], number | null>('SELECT min(seq) FROM events').pluck().get();
  if (liveFirst == null) return [{ from: 1, to: Number.POSITIVE_INFINITY, where: basename(path), checkpoint: null }];
  const pieces = [
    ...(store.archives?.list(liveFirst) ?? []).map((s) => ({ from: s.from, to: s.to, where: `archive/${s.file}`, file: s.path })),
    { from: liveFirst, to: Number.POSITIVE_INFINITY, where: basename(path), file: null },
  ];
  const stretches: Stretch[] = [];
  for (const piece of pieces) {
    const last = stretches.at(-1);
    if (last && piece.from <= last.to + 1) {
      stretches[stretches.length - 1] = { ...last, to: piece.to };
      continue;
    }
    const checkpoint =
      piece.from === 1 ? null : piece.file ? segmentCheckpoint(piece.file, piece.from - 1) : readCheckpoint(store.db, piece.from - 1);
    stretches.push({ from: piece.from, to: piece.to, where: piece.where, checkpoint });
  }
  return stretches;
}

function segmentCheckpoint(file: string, seq: number): CheckpointEntry[] | null {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return readCheckpoint(db, seq);
  } finally {
    db.close();
  }
}
