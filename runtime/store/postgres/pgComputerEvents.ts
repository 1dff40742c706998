import { type DomainEvent, codec as defaultCodec } from '../../../events/catalog.ts';
import type { AnyEventCodec } from '../../../events/codec.ts';
import { type ComputerEvents, rowsToKeep } from '../computerEvents.ts';
import { type ForeignRowPolicy, ID_RANGE_END, type RawRow, RowDecoder } from '../rowDecoder.ts';
import type { PostgresEventStore } from './postgresEventStore.ts';

const COLUMNS = 'seq, stream, version, type, data, at, cause, actor';

const SQL = {
  /**
   * Who keeps a report first, alone: `position` (a bigserial) is drawn under this lock and the lock is
   * let go at commit, so positions commit in their order and a board following them (ReportedFolds)
   * never passes one committed late, whichever board of the log kept it.
   */
  lock: `SELECT pg_advisory_xact_lock(hashtextextended(current_schema() || '/runledger.computer_events', 0))`,
  through: 'SELECT through FROM computer_reports WHERE computer = $1',
  counts: `SELECT stream, count(*)::int FROM computer_events WHERE computer = $1 AND entity = ANY($2::text[]) GROUP BY stream`,
  insert: `INSERT INTO computer_events (computer, seq, stream, version, type, data, at, cause, actor, entity, mentions)
    SELECT $1, * FROM unnest($2::bigint[], $3::text[], $4::int[], $5::text[], $6::text[], $7::bigint[], $8::bigint[], $9::text[], $10::text[], $11::text[])
    ON CONFLICT (computer, seq) DO NOTHING`,
  moveThrough: `INSERT INTO computer_reports (computer, through) VALUES ($1, $2)
    ON CONFLICT (computer) DO UPDATE SET through = greatest(computer_reports.through, excluded.through)`,
  entity: `SELECT ${COLUMNS} FROM (SELECT position, ${COLUMNS} FROM computer_events WHERE entity = $1
    UNION SELECT position, ${COLUMNS} FROM computer_events WHERE mentions = $1) AS found ORDER BY position`,
  ids: `SELECT entity FROM computer_events WHERE entity >= $1 AND entity < $2
    UNION SELECT mentions FROM computer_events WHERE mentions >= $1 AND mentions < $2 ORDER BY 1 LIMIT $3`,
  after: `SELECT position, ${COLUMNS} FROM computer_events WHERE position > $1 ORDER BY position LIMIT $2`,
};

/**
 * The computers' reported events on a PostgreSQL board (migration 0008): tables of their own beside
 * `events`, shared by every board of the log, so each board's pages show what a computer reported to
 * any of them. Computers never write a PostgreSQL log (they keep SQLite logs of their own), so no
 * reported row can be one of the board's own events.
 */
export function postgresComputerEvents(
  store: Pick<PostgresEventStore, 'shared' | 'sharedTransaction'>,
  options: { codec?: AnyEventCodec; foreignRows?: ForeignRowPolicy } = {},
): ComputerEvents {
  const rows = new RowDecoder(options.codec ?? defaultCodec, options.foreignRows);
  return {
    record: (computer, reported) =>
      store.sharedTransaction(async (client) => {
        await client.query(SQL.lock);
        const before = await client.query<[number]>({ text: SQL.through, values: [computer], rowMode: 'array' });
        const last = Math.max(before.rows[0]?.[0] ?? 0, ...reported.map((row) => row.seq));
        // Only runs' and sessions' streams are bounded (lanes' and computers' are kept whole, and long).
        const entities = [...new Set(reported.map((row) => row.stream.slice(row.stream.indexOf('/') + 1)))].filter(
          (entity) => entity.startsWith('run:') || entity.startsWith('session:'),
        );
        const counts = await client.query<[string, number]>({ text: SQL.counts, values: [computer, entities], rowMode: 'array' });
        const held = new Map(counts.rows);
        const kept = rowsToKeep(reported, (_entity, stream) => held.get(stream) ?? 0);
        if (kept.length > 0) {
          await client.query(SQL.insert, [
            computer,
            kept.map((r) => r.seq),
            kept.map((r) => r.stream),
            kept.map((r) => r.version),
            kept.map((r) => r.type),
            kept.map((r) => JSON.stringify(r.data)),
            kept.map((r) => r.at),
            kept.map((r) => r.cause),
            kept.map((r) => r.actor),
            kept.map((r) => r.entity),
            kept.map((r) => r.mentions),
          ]);
        }
        await client.query(SQL.moveThrough, [computer, last]);
        return last;
      }),
    async readEntity(kindAndId) {
      return rows.decodeAll(await store.shared<RawRow>('runledger_reported_entity', SQL.entity, [kindAndId]));
    },
    async entityIdsStartingWith(kind, prefix, limit) {
      const found = await store.shared<[string]>('runledger_reported_ids', SQL.ids, [`${kind}:${prefix}`, `${kind}:${prefix}${ID_RANGE_END}`, limit]);
      return found.map(([entity]) => entity.slice(kind.length + 1));
    },
    async readAll(after, limit) {
      const found: { position: number; event: DomainEvent }[] = [];
      for (const [position, ...row] of await store.shared<[number, ...RawRow]>('runledger_reported_after', SQL.after, [after, limit])) {
        const event = rows.decode(row as RawRow);
        if (event) found.push({ position, event });
      }
      return found;
    },
  };
}
