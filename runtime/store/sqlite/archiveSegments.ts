import { createHash } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { DomainEvent } from '../../../events/catalog.ts';
import { LOG_ARCHIVE_STREAM } from '../../../events/logEvents.ts';
import { appendOrThrow } from '../eventStore.ts';
import { segmentRecords } from '../retention/archiveRecords.ts';
import { CutFinder, horizonOf } from '../retention/chooseCut.ts';
import { archiveFolder, parseSegmentName, segmentName } from './archiveShelf.ts';
import { migrateToLatest } from './migrations.ts';
import { reclaimFreePages, repackSpreadIndexes } from './reclaimSpace.ts';
import type { SqliteEventStore } from './sqliteEventStore.ts';
import { type CheckpointFold, pruneCheckpoints, saveCheckpointAtCut } from './startingCheckpoints.ts';

const DAY_MS = 86_400_000;
const REMOVE_CHUNK = 5000;

/** The steps of archiving a segment, in order: a fault injected before one of them is a crash there. */
export type ArchiveStep = 'checkpoint' | 'write' | 'rename' | 'record' | 'remove' | 'removed-some';

export interface RetentionOptions {
  readonly retainDays: number;
  /** Deletes segments whose last event is older than this many days: only when given. */
  readonly deleteAfterDays?: number;
  /** The writer's clock, read by the caller: the cut is a function of it and the log. */
  readonly now: number;
  /**
   * The folds of the starting checkpoints (docs/retention.md#starting-checkpoints): each segment and the
   * live log after the cut get the states at their first event. Without it (a test of the store alone)
   * none is written, and such a segment is replayed only from seq 1.
   */
  readonly checkpoint?: CheckpointFold;
  /** Only for tests: called before each step; a throw stands for a crash there. */
  readonly before?: (step: ArchiveStep) => void;
}

export interface ArchiveResult {
  readonly from: number;
  readonly to: number;
  readonly file: string;
  readonly events: number;
  /** Folds the starting checkpoint could not carry on (see saveCheckpointAtCut): none, as a rule. */
  readonly missing?: readonly string[];
  /** Bytes the live file gave back to the file system after the cut. */
  readonly freed?: number;
}

/**
 * One round of retention on the log `store` at `path` (docs/retention.md): moves the rows older than
 * the cut to a sealed segment, in the order that loses nothing at any crash (write, fsync, rename,
 * fsync the folder, record durably, then remove), and deletes the segments `deleteAfterDays` says.
 * Returns the segment written, or null when the cut has not moved.
 */
export async function archiveOnce(store: SqliteEventStore, path: string, options: RetentionOptions): Promise<ArchiveResult | null> {
  const written = await writeSegment(store, path, options);
  if (options.deleteAfterDays !== undefined) await deleteOldSegments(store, path, options.deleteAfterDays, options.now);
  if (written) await repackSpreadIndexes(store.db);
  // Every round, not only one that cut: a round whose reclaiming failed (a busy file) is made up for.
  const freed = await reclaimFreePages(store.db);
  return written ? { ...written, freed } : null;
}

async function writeSegment(store: SqliteEventStore, path: string, options: RetentionOptions): Promise<ArchiveResult | null> {
  const db = store.db;
  const first = db.prepare<[], number>('SELECT seq FROM events ORDER BY seq LIMIT 1').pluck().get();
  if (first === undefined) return null;
  const finder = new CutFinder(horizonOf(options.now, options.retainDays), first - 1);
  let after = first - 1;
  while (!finder.done) {
    const visited = await store.scanRows(after, 5000, (row) => {
      finder.visit(row);
      after = row.seq;
    });
    if (visited < 5000) break;
  }
  // Every checkpoint (projections, outbox marks) is at or past the cut: a start folds each from its
  // checkpoint on, so nothing it folds may have left.
  // With none stored, a start folds from seq 1, through the segments.
  const lowestCheckpoint = db.prepare<[], number | null>('SELECT min(seq) FROM projection_checkpoints').pluck().get() ?? Number.POSITIVE_INFINITY;
  const archives = store.archives;
  const to = Math.min(
    finder.cut((entity) => archives?.holds(entity, first) ?? false),
    lowestCheckpoint,
  );
  if (to < first) return null;

  const folder = archiveFolder(path);
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  const file = segmentName(path, first, to);
  const temp = join(folder, `.${file}.tmp`);
  options.before?.('checkpoint');
  const missing = options.checkpoint ? await saveCheckpointAtCut(store, first, to, options.checkpoint) : [];
  options.before?.('write');
  rmSync(temp, { force: true });
  const events = await sealSegment(db, temp, first, to);
  options.before?.('rename');
  renameSync(temp, join(folder, file));
  fsyncPath(folder);
  options.before?.('record');
  const earlier = segmentRecords(await store.readStream(LOG_ARCHIVE_STREAM));
  await record(store, { from: first, to, file, sha256: sha256Of(join(folder, file)), events, retainDays: options.retainDays, earlier }, options.now);
  options.before?.('remove');
  await removeArchivedRows(store, to, options.before);
  pruneCheckpoints(store);
  return { from: first, to, file, events, missing };
}

/** Writes rows `from..to` to a new SQLite log file at `temp` and fsyncs it; returns how many. */
async function sealSegment(live: Database.Database, temp: string, from: number, to: number): Promise<number> {
  const segment = new Database(temp);
  try {
    // One self-contained file, no WAL beside it: a sealed segment is one file to copy or check.
    segment.pragma('journal_mode = DELETE');
    await migrateToLatest(segment);
  } finally {
    segment.close();
  }
  live.prepare('ATTACH DATABASE ? AS segment').run(temp);
  try {
    const copied = live
      .prepare<[number, number]>(
        'INSERT INTO segment.events SELECT seq, stream, version, type, data, at, cause, actor FROM main.events WHERE seq >= ? AND seq <= ? ORDER BY seq',
      )
      .run(from, to).changes;
    // Its starting checkpoint: the states at `from - 1` the live log keeps since the last cut.
    live
      .prepare<[number]>(
        'INSERT INTO segment.starting_checkpoint (name, version, seq, state) SELECT name, version, seq, state FROM main.starting_checkpoint WHERE seq = ?',
      )
      .run(from - 1);
    return copied;
  } finally {
    live.exec('DETACH DATABASE segment');
    fsyncPath(temp);
  }
}

async function record(store: SqliteEventStore, data: Extract<DomainEvent, { type: 'log.archived' }>['data'], at: number): Promise<void> {
  await appendOrThrow(store, { expected: { [LOG_ARCHIVE_STREAM]: 'any' }, events: [{ stream: LOG_ARCHIVE_STREAM, type: 'log.archived', data, at }] });
}

/** Removes the rows through `to` from the live log, a chunk a transaction: the whole prefix, or the rest of it. */
async function removeArchivedRows(store: SqliteEventStore, to: number, before?: (step: ArchiveStep) => void): Promise<number> {
  const remove = store.db.prepare<[number, number]>('DELETE FROM events WHERE seq IN (SELECT seq FROM events WHERE seq <= ? ORDER BY seq LIMIT ?)');
  let removed = 0;
  for (;;) {
    const changes = remove.run(to, REMOVE_CHUNK).changes;
    removed += changes;
    if (changes < REMOVE_CHUNK) return removed;
    before?.('removed-some');
    // The daemon's other work gets the event loop between chunks.
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/**
 * Finishes or undoes, at start, a round of retention cut by a crash (docs/retention.md): a temp file is
 * removed; a segment not recorded is recorded if it holds exactly the live rows of its range, else
 * removed; rows recorded as archived but still live are removed; a recorded deletion is finished.
 * Returns a line for each thing it did.
 */
export async function recoverArchives(store: SqliteEventStore, path: string, now: number): Promise<string[]> {
  const folder = archiveFolder(path);
  if (!existsSync(folder)) return [];
  const done: string[] = [];
  const recorded = new Map<string, Extract<DomainEvent, { type: 'log.archived' }>['data']>();
  const deleted = new Set<string>();
  for (const event of await store.readStream(LOG_ARCHIVE_STREAM)) {
    if (event.type === 'log.archived') recorded.set(event.data.file, event.data);
    if (event.type === 'log.archive.deleted') deleted.add(event.data.file);
  }
  for (const file of readdirSync(folder)) {
    const full = join(folder, file);
    if (file.startsWith('.') && file.endsWith('.tmp')) {
      rmSync(full, { force: true });
      done.push(`removed ${file}, a segment whose writing a crash cut`);
      continue;
    }
    const range = parseSegmentName(path, file);
    if (!range) continue;
    if (deleted.has(file)) {
      rmSync(full, { force: true });
      done.push(`deleted ${file}, as recorded before a crash`);
      continue;
    }
    if (recorded.has(file)) continue;
    const events = matchesLiveRows(store.db, full, range.from, range.to);
    if (events === null) {
      rmSync(full, { force: true });
      done.push(`removed ${file}: it was not recorded and does not hold the live log's rows ${range.from}..${range.to}`);
      continue;
    }
    const retainDays = Math.max(1, Math.round((now - (lastAt(store.db, range.to) ?? now)) / DAY_MS));
    await record(store, { ...range, file, sha256: sha256Of(full), events, retainDays }, now);
    recorded.set(file, { ...range, file, sha256: '', events, retainDays });
    done.push(`recorded ${file}, written before a crash`);
  }
  fsyncPath(folder);
  const through = Math.max(0, ...[...recorded.values()].map((r) => r.to));
  const removed = through ? await removeArchivedRows(store, through) : 0;
  if (removed) done.push(`removed ${removed} live rows through seq ${through}, archived before a crash`);
  pruneCheckpoints(store);
  return done;
}

/** The number of rows of the segment when they are exactly the live log's rows `from..to`, else null. */
function matchesLiveRows(live: Database.Database, file: string, from: number, to: number): number | null {
  live.prepare('ATTACH DATABASE ? AS candidate').run(file);
  try {
    const count = (sql: string) => live.prepare<[number, number], number>(sql).pluck().get(from, to) ?? 0;
    const inLive = count('SELECT count(*) FROM main.events WHERE seq >= ? AND seq <= ?');
    const inSegment = count('SELECT count(*) FROM candidate.events WHERE seq >= ? AND seq <= ?');
    const same = count(
      `SELECT count(*) FROM main.events m JOIN candidate.events c USING (seq) WHERE m.seq >= ? AND m.seq <= ?
       AND m.stream = c.stream AND m.version = c.version AND m.type = c.type AND m.data = c.data AND m.at = c.at
       AND m.cause IS c.cause AND m.actor = c.actor`,
    );
    const total = live.prepare<[], number>('SELECT count(*) FROM candidate.events').pluck().get() ?? 0;
    return inLive > 0 && inLive === inSegment && same === inLive && total === inSegment ? inLive : null;
  } catch {
    return null;
  } finally {
    live.exec('DETACH DATABASE candidate');
  }
}

function lastAt(db: Database.Database, seq: number): number | undefined {
  return db.prepare<[number], number>('SELECT at FROM events WHERE seq <= ? ORDER BY seq DESC LIMIT 1').pluck().get(seq);
}

/** Deletes, recorded first, the segments whose last event is older than `afterDays` days. */
async function deleteOldSegments(store: SqliteEventStore, path: string, afterDays: number, now: number): Promise<void> {
  const folder = archiveFolder(path);
  const archived = (await store.readStream(LOG_ARCHIVE_STREAM)).filter((e) => e.type === 'log.archived');
  for (const { data } of archived) {
    const full = join(folder, data.file);
    if (!existsSync(full)) continue;
    const segment = new Database(full, { readonly: true, fileMustExist: true });
    const newest = segment.prepare<[], number | null>('SELECT max(at) FROM events').pluck().get() ?? now;
    segment.close();
    if (newest >= now - afterDays * DAY_MS) continue;
    const { from, to, file, sha256 } = data;
    await appendOrThrow(store, {
      expected: { [LOG_ARCHIVE_STREAM]: 'any' },
      events: [{ stream: LOG_ARCHIVE_STREAM, type: 'log.archive.deleted', data: { from, to, file, sha256, afterDays }, at: now }],
    });
    rmSync(full, { force: true });
    fsyncPath(folder);
  }
}

function sha256Of(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

/** fsync of a file, or of a folder so that a rename or unlink in it is durable. */
function fsyncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
