import type Database from 'better-sqlite3';
import { codec, type DomainEvent } from '../../../events/catalog.ts';
import { type ComputerEvents, type ReportedRow, rowsToKeep } from '../computerEvents.ts';
import { asLogUnwritable } from '../logUnwritable.ts';
import { type ForeignRowPolicy, ID_RANGE_END, type RawRow, RowDecoder } from '../rowDecoder.ts';

/**
 * The computers' reported events on a SQLite board: tables of their own in the board's file, beside
 * `events` and not in it (so `replay`, `rebuild` and the folds never see them, and a backup keeps
 * them). Made when the board first opens the file read-write, not by a migration: a read-only tool
 * (`audit`) on a log without them reads none, and older logs stay readable by every tool.
 */
const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS computer_events (
     position INTEGER PRIMARY KEY,
     computer TEXT NOT NULL, seq INTEGER NOT NULL,
     stream TEXT NOT NULL, version INTEGER NOT NULL, type TEXT NOT NULL, data TEXT NOT NULL,
     at INTEGER NOT NULL, cause INTEGER, actor TEXT NOT NULL,
     entity TEXT NOT NULL, mentions TEXT,
     UNIQUE (computer, seq))`,
  'CREATE INDEX IF NOT EXISTS computer_events_entity ON computer_events (entity, computer)',
  'CREATE INDEX IF NOT EXISTS computer_events_mentions ON computer_events (mentions) WHERE mentions IS NOT NULL',
  'CREATE TABLE IF NOT EXISTS computer_reports (computer TEXT PRIMARY KEY, through INTEGER NOT NULL)',
];

const COLUMNS = 'position, seq, stream, version, type, data, at, cause, actor';
type Row = [position: number, ...RawRow];

/** The reported events of the board whose SQLite log `db` is; null for a read-only file that holds none yet. */
export function sqliteComputerEvents(db: Database.Database, foreignRows?: ForeignRowPolicy): ComputerEvents | null {
  if (db.readonly) {
    const made = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'computer_events'").get() !== undefined;
    if (!made) return null;
  } else {
    try {
      for (const statement of SCHEMA) db.exec(statement);
    } catch (error) {
      throw asLogUnwritable(error, db.name);
    }
  }
  const rows = new RowDecoder(codec, foreignRows);
  const insert = db.prepare<[string, number, string, number, string, string, number, number | null, string, string, string | null]>(
    `INSERT INTO computer_events (computer, seq, stream, version, type, data, at, cause, actor, entity, mentions)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (computer, seq) DO NOTHING`,
  );
  const countOfStream = db
    .prepare<[string, string, string], number>('SELECT count(*) FROM computer_events WHERE entity = ? AND computer = ? AND stream = ?')
    .pluck();
  const inOwnLog = db.prepare<[string, number], number>('SELECT 1 FROM events WHERE stream = ? AND version = ?').pluck();
  const through = db.prepare<[string], number>('SELECT through FROM computer_reports WHERE computer = ?').pluck();
  const moveThrough = db.prepare<[string, number]>(
    `INSERT INTO computer_reports (computer, through) VALUES (?, ?)
     ON CONFLICT (computer) DO UPDATE SET through = max(through, excluded.through)`,
  );
  const selectEntity = db
    .prepare<[string, string], Row>(
      `SELECT ${COLUMNS} FROM computer_events WHERE entity = ? UNION SELECT ${COLUMNS} FROM computer_events WHERE mentions = ? ORDER BY position`,
    )
    .raw(true);
  const selectIds = db
    .prepare<[string, string, string, string, number], string>(
      `SELECT entity FROM computer_events WHERE entity >= ? AND entity < ?
       UNION SELECT mentions FROM computer_events WHERE mentions >= ? AND mentions < ? ORDER BY 1 LIMIT ?`,
    )
    .pluck();
  const selectAfter = db
    .prepare<[number, number], Row>(`SELECT ${COLUMNS} FROM computer_events WHERE position > ? ORDER BY position LIMIT ?`)
    .raw(true);
  const decode = (row: Row) => rows.decode(row.slice(1) as unknown as RawRow);

  const recordAll = db.transaction((computer: string, reported: readonly ReportedRow[]) => {
    let last = (through.get(computer) as number | undefined) ?? 0;
    for (const row of reported) last = Math.max(last, row.seq);
    // A computer that writes the board's own file (two daemons on one log) reports what the board's log
    // holds already: kept twice, its events showed twice on the run page.
    const fresh = reported.filter((row) => inOwnLog.get(row.stream, row.version) === undefined);
    for (const row of rowsToKeep(fresh, (entity, stream) => countOfStream.get(entity, computer, stream) ?? 0)) {
      insert.run(
        computer,
        row.seq,
        row.stream,
        row.version,
        row.type,
        JSON.stringify(row.data),
        row.at,
        row.cause,
        row.actor,
        row.entity,
        row.mentions,
      );
    }
    moveThrough.run(computer, last);
    return last;
  });

  return {
    async record(computer, reported) {
      try {
        return recordAll(computer, reported);
      } catch (error) {
        throw asLogUnwritable(error, db.name);
      }
    },
    async readEntity(kindAndId) {
      return rows.decodeAll(selectEntity.all(kindAndId, kindAndId).map((row) => row.slice(1) as unknown as RawRow));
    },
    async entityIdsStartingWith(kind, prefix, limit) {
      const from = `${kind}:${prefix}`;
      const to = `${kind}:${prefix}${ID_RANGE_END}`;
      return (selectIds.all(from, to, from, to, limit) as string[]).map((entity) => entity.slice(kind.length + 1));
    },
    async readAll(after, limit) {
      const found: { position: number; event: DomainEvent }[] = [];
      for (const row of selectAfter.all(after, limit)) {
        const event = decode(row);
        if (event) found.push({ position: row[0], event });
      }
      return found;
    },
  };
}
