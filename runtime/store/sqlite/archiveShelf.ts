import { existsSync, readdirSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import Database from 'better-sqlite3';
import type { RawRow } from '../rowDecoder.ts';
import type { FoldColumns } from '../scanRows.ts';

/** The columns of a fold's row, in the order both stores select them (../scanRows.ts). */
export type RawFoldRow = FoldColumns;

const COLUMNS = 'seq, stream, version, type, data, at, cause, actor';
const STREAM_ENTITY = `substr(stream, instr(stream, '/') + 1)`;

/** Where the sealed segments of the log at `path` live (docs/retention.md): `archive/` beside it. */
export function archiveFolder(path: string): string {
  return join(dirname(path), 'archive');
}

/** The file name of the segment of `path`'s rows `from..to`. */
export function segmentName(path: string, from: number, to: number): string {
  return `${stemOf(path)}-${from}-${to}.db`;
}

function stemOf(path: string): string {
  const name = basename(path);
  return extname(name) ? name.slice(0, -extname(name).length) : name;
}

/** A sealed segment's seqs, from its name; null for any other file of the folder (a temp file). */
export function parseSegmentName(path: string, file: string): { from: number; to: number } | null {
  const match = new RegExp(`^${escapeRegExp(stemOf(path))}-(\\d+)-(\\d+)\\.db$`).exec(file);
  return match ? { from: Number(match[1]), to: Number(match[2]) } : null;
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

interface Segment {
  readonly from: number;
  readonly to: number;
  readonly file: string;
  readonly path: string;
  statements: SegmentStatements | null;
}

interface SegmentStatements {
  readonly db: Database.Database;
  readonly after: Database.Statement<[number, number, number], RawRow>;
  readonly foldRows: Database.Statement<[number, number, number], RawFoldRow>;
  readonly stream: Database.Statement<[string, number, number], RawRow>;
  readonly streamBackwards: Database.Statement<[string, number], RawRow>;
  readonly runMentions: Database.Statement<[string, number, string, number], RawRow>;
  readonly sessionMentions: Database.Statement<[string, number, string, number], RawRow>;
  readonly entity: Database.Statement<[string, number], RawRow>;
  readonly streamIds: Database.Statement<[string, string, number], string>;
  readonly mentionedIds: Record<'run' | 'session', Database.Statement<[string, string, number], unknown>>;
  readonly holdsByStream: Database.Statement<[string], number>;
  readonly holdsByData: Record<'runId' | 'sessionId', Database.Statement<[string], number>>;
}

/**
 * The sealed segments of one log, read-only, opened when first read. Every read takes `below`, the live
 * log's first seq: a segment's rows at or past it are ignored, so a segment written but whose rows have
 * not left the live log yet (a crash between the two) is never read twice.
 */
export class ArchiveShelf {
  private segments: Segment[] = [];
  private scannedFor = Number.NaN;

  constructor(private readonly logPath: string) {}

  /** The segments, oldest first; the folder is looked at again whenever the live log's first seq moved. */
  list(liveFirst: number): readonly Segment[] {
    if (liveFirst !== this.scannedFor) this.rescan(liveFirst);
    return this.segments;
  }

  private rescan(liveFirst: number): void {
    this.scannedFor = liveFirst;
    const folder = archiveFolder(this.logPath);
    const files = existsSync(folder) ? readdirSync(folder) : [];
    const known = new Map(this.segments.map((s) => [s.file, s]));
    const next: Segment[] = [];
    for (const file of files) {
      const range = parseSegmentName(this.logPath, file);
      if (!range) continue;
      next.push(known.get(file) ?? { ...range, file, path: join(folder, file), statements: null });
    }
    for (const gone of this.segments) if (!next.includes(gone)) gone.statements?.db.close();
    this.segments = next.sort((a, b) => a.from - b.from);
  }

  /** Rows with `after < seq < below`, in seq order, at most `limit`. */
  rowsAfter(after: number, below: number, limit: number): RawRow[] {
    return this.gather(after, below, limit, (s, bound, wanted) => s.after.all(after, bound, wanted));
  }

  foldRowsAfter(after: number, below: number, limit: number): RawFoldRow[] {
    return this.gather(after, below, limit, (s, bound, wanted) => s.foldRows.all(after, bound, wanted));
  }

  private gather<R>(after: number, below: number, limit: number, read: (s: SegmentStatements, bound: number, wanted: number) => R[]): R[] {
    const rows: R[] = [];
    for (const segment of this.list(below)) {
      if (segment.to <= after || segment.from >= below) continue;
      rows.push(...read(this.open(segment), below, limit - rows.length));
      if (rows.length >= limit) break;
    }
    return rows;
  }

  /** A stream's rows with `version > after`, from every segment, in version order. */
  streamRows(stream: string, after: number, below: number): RawRow[] {
    return this.list(below).flatMap((s) => (s.from < below ? this.open(s).stream.all(stream, after, below) : []));
  }

  /** A stream's rows, newest first, from the newest segment that has any. */
  *streamBackwards(stream: string, below: number): Generator<RawRow> {
    for (const segment of [...this.list(below)].reverse()) {
      if (segment.from >= below) continue;
      yield* this.open(segment).streamBackwards.iterate(stream, below);
    }
  }

  /** An entity's rows (its own streams and the events naming it) from every segment, in seq order. */
  entityRows(kindAndId: string, below: number): RawRow[] {
    const kind = kindAndId.slice(0, kindAndId.indexOf(':'));
    const id = kindAndId.slice(kindAndId.indexOf(':') + 1);
    return this.list(below).flatMap((segment) => {
      if (segment.from >= below) return [];
      const s = this.open(segment);
      if (kind === 'run') return s.runMentions.all(kindAndId, below, id, below);
      if (kind === 'session') return s.sessionMentions.all(kindAndId, below, id, below);
      return s.entity.all(kindAndId, below);
    });
  }

  /** Whether a segment holds a row of the entity (`run:ID`, `session:ID`), newest segment first. */
  holds(kindAndId: string, below: number): boolean {
    const field = kindAndId.startsWith('run:') ? 'runId' : 'sessionId';
    const id = kindAndId.slice(kindAndId.indexOf(':') + 1);
    for (const segment of [...this.list(below)].reverse()) {
      if (segment.from >= below) continue;
      const s = this.open(segment);
      if (s.holdsByStream.get(kindAndId) !== undefined || s.holdsByData[field].get(id) !== undefined) return true;
    }
    return false;
  }

  /** Entity ids in `[low, high)` found in the segments: those with a stream, and those named in data. */
  entityIds(kind: 'run' | 'session', prefix: string, end: string, limit: number, below: number): { named: string[]; mentioned: unknown[] } {
    const named: string[] = [];
    const mentioned: unknown[] = [];
    for (const segment of this.list(below)) {
      if (segment.from >= below) continue;
      const s = this.open(segment);
      named.push(...s.streamIds.all(`${kind}:${prefix}`, `${kind}:${prefix}${end}`, limit));
      mentioned.push(...s.mentionedIds[kind].all(prefix, `${prefix}${end}`, limit));
    }
    return { named, mentioned };
  }

  close(): void {
    for (const segment of this.segments) segment.statements?.db.close();
    this.segments = [];
    this.scannedFor = Number.NaN;
  }

  private open(segment: Segment): SegmentStatements {
    if (segment.statements) return segment.statements;
    const db = new Database(segment.path, { readonly: true, fileMustExist: true });
    const mentions = (field: 'runId' | 'sessionId') =>
      db
        .prepare<[string, number, string, number], RawRow>(
          `SELECT ${COLUMNS} FROM events WHERE ${STREAM_ENTITY} = ? AND seq < ?
           UNION SELECT ${COLUMNS} FROM events WHERE json_extract(data, '$.${field}') = ? AND json_extract(data, '$.${field}') IS NOT NULL AND seq < ?
           ORDER BY seq`,
        )
        .raw(true);
    const mentionedIds = (field: 'runId' | 'sessionId') =>
      db
        .prepare<[string, string, number], unknown>(
          `SELECT DISTINCT json_extract(data, '$.${field}') FROM events WHERE json_extract(data, '$.${field}') IS NOT NULL
           AND json_extract(data, '$.${field}') >= ? AND json_extract(data, '$.${field}') < ? ORDER BY json_extract(data, '$.${field}') LIMIT ?`,
        )
        .pluck(true);
    const holds = (field: 'runId' | 'sessionId') =>
      db
        .prepare<[string], number>(
          `SELECT 1 FROM events WHERE json_extract(data, '$.${field}') = ? AND json_extract(data, '$.${field}') IS NOT NULL LIMIT 1`,
        )
        .pluck();
    segment.statements = {
      db,
      after: db.prepare<[number, number, number], RawRow>(`SELECT ${COLUMNS} FROM events WHERE seq > ? AND seq < ? ORDER BY seq LIMIT ?`).raw(true),
      foldRows: db
        .prepare<[number, number, number], RawFoldRow>(
          'SELECT seq, stream, type, data, at, cause FROM events WHERE seq > ? AND seq < ? ORDER BY seq LIMIT ?',
        )
        .raw(true),
      stream: db
        .prepare<[string, number, number], RawRow>(`SELECT ${COLUMNS} FROM events WHERE stream = ? AND version > ? AND seq < ? ORDER BY version`)
        .raw(true),
      streamBackwards: db
        .prepare<[string, number], RawRow>(`SELECT ${COLUMNS} FROM events WHERE stream = ? AND seq < ? ORDER BY version DESC`)
        .raw(true),
      runMentions: mentions('runId'),
      sessionMentions: mentions('sessionId'),
      entity: db.prepare<[string, number], RawRow>(`SELECT ${COLUMNS} FROM events WHERE ${STREAM_ENTITY} = ? AND seq < ? ORDER BY seq`).raw(true),
      streamIds: db
        .prepare<[string, string, number], string>(
          `SELECT DISTINCT ${STREAM_ENTITY} FROM events WHERE ${STREAM_ENTITY} >= ? AND ${STREAM_ENTITY} < ? ORDER BY ${STREAM_ENTITY} LIMIT ?`,
        )
        .pluck(true),
      mentionedIds: { run: mentionedIds('runId'), session: mentionedIds('sessionId') },
      // Through the indexes of migrations 0003 and 0004, as every read of an entity.
      holdsByStream: db.prepare<[string], number>(`SELECT 1 FROM events WHERE ${STREAM_ENTITY} = ? LIMIT 1`).pluck(),
      holdsByData: { runId: holds('runId'), sessionId: holds('sessionId') },
    };
    return segment.statements;
  }
}
