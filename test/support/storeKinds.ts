import Database from 'better-sqlite3';
import { onTestFinished } from 'vitest';
import type { EventStore } from '../../runtime/store/eventStore.ts';
import { openStore, type StoreOptions } from '../../runtime/store/open/openStore.ts';
import { counterCodec } from '../fixtures/counter/counterEvents.ts';
import { freshPostgresLog, withClient } from './postgresLog.ts';
import { tempDbPath } from './tempStore.ts';

/** A row written behind the store's back, as another (older, newer or broken) writer could have. */
export interface RawEventRow {
  seq: number;
  stream: string;
  version: number;
  type: string;
  data: string;
}

/**
 * The two stores the store suite runs on (`describe.each(storeKinds)`): where a fresh log is, a store
 * opened on it (closed when the test ends), and a raw insert behind its back.
 */
export interface StoreKind {
  readonly name: 'sqlite' | 'postgres';
  /** Where a new, empty log is: a file path or a `postgres://` URL. */
  fresh(): Promise<string>;
  /** A store holding counters (the catalog and the counter's events) on the log at `where`, closed when the test ends. */
  open(where: string, options?: StoreOptions): Promise<EventStore>;
  /**
   * Writes `row` with no store's checks. The indexes on the data's ids refuse text that is not JSON at
   * insert time; a log written before they existed can still hold such a row, so they go first.
   */
  insertRaw(where: string, row: RawEventRow): Promise<void>;
  /** The data column of a row as stored. */
  rawData(where: string, seq: number): Promise<string>;
}

async function openCounters(where: string, options: StoreOptions = {}): Promise<EventStore> {
  const store = await openStore(where, { codec: counterCodec, ...options });
  onTestFinished(() => store.close());
  return store;
}

export const sqliteKind: StoreKind = {
  name: 'sqlite',
  fresh: async () => tempDbPath(),
  open: openCounters,
  async insertRaw(path, row) {
    const raw = new Database(path);
    try {
      raw.exec('DROP INDEX IF EXISTS events_run_id; DROP INDEX IF EXISTS events_session_id');
      raw
        .prepare('insert into events (seq, stream, version, type, data, at, cause, actor) values (?, ?, ?, ?, ?, ?, null, ?)')
        .run(row.seq, row.stream, row.version, row.type, row.data, 1000, 'elsewhere:1');
    } finally {
      raw.close();
    }
  },
  async rawData(path, seq) {
    const raw = new Database(path, { readonly: true });
    try {
      return raw.prepare<[number], string>('select data from events where seq = ?').pluck().get(seq)!;
    } finally {
      raw.close();
    }
  },
};

export const postgresKind: StoreKind = {
  name: 'postgres',
  fresh: freshPostgresLog,
  open: openCounters,
  insertRaw: (url, row) =>
    withClient(url, async (client) => {
      await client.query('DROP INDEX IF EXISTS events_run_id; DROP INDEX IF EXISTS events_session_id');
      await client.query(
        `insert into events (seq, stream, version, type, data, at, cause, actor) values ($1, $2, $3, $4, $5, 1000, null, 'elsewhere:1')`,
        [row.seq, row.stream, row.version, row.type, row.data],
      );
    }),
  rawData: (url, seq) =>
    withClient(url, async (client) => (await client.query<{ data: string }>('select data from events where seq = $1', [seq])).rows[0]!.data),
};

export const storeKinds: readonly StoreKind[] = [sqliteKind, postgresKind];

/** A fresh log of `kind` and a store holding counters on it. */
export async function freshStore(kind: StoreKind, options: StoreOptions = {}): Promise<{ store: EventStore; where: string }> {
  const where = await kind.fresh();
  return { store: await kind.open(where, options), where };
}
