import type pg from 'pg';
import type { Checkpoint, CheckpointStore, SnapshotInfo, SnapshotStore } from '../eventStore.ts';
import { SNAPSHOT_EVERY, SNAPSHOTS_KEPT, type SnapshotPolicy } from '../sqlite/snapshots.ts';

/** A query on a pooled connection, its failures turned into what the store reports (see asPgUnwritable). */
export type Query = <R extends pg.QueryResultRow>(config: pg.QueryConfig) => Promise<R[]>;
/** `body` in one transaction on a pooled connection (rolled back if it throws), failures reported as a query's. */
export type Transaction = <T>(body: (client: pg.ClientBase) => Promise<T>) => Promise<T>;

/**
 * The checkpoints and the snapshot history on PostgreSQL: the same tables and rules as SQLite's
 * (snapshots.ts there), a name's checkpoint counting as its newest snapshot.
 */
export function pgSnapshots(
  query: Query,
  transaction: Transaction,
  policy: SnapshotPolicy = {},
): SnapshotStore & { archive(checkpoint: Checkpoint): Promise<void> } {
  const every = policy.every ?? SNAPSHOT_EVERY;
  const kept = policy.kept ?? SNAPSHOTS_KEPT;
  const newest = async (name: string) =>
    (await query<{ seq: number | null }>({ text: 'SELECT max(seq) AS seq FROM projection_snapshots WHERE name = $1', values: [name] }))[0]?.seq ??
    null;
  const saveNow = (snapshot: Checkpoint) =>
    transaction(async (client) => {
      // Bookkeeping, not a decision: the save time is the wall clock's.
      await client.query(
        `INSERT INTO projection_snapshots (name, seq, state, saved_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (name, seq) DO UPDATE SET state = excluded.state, saved_at = excluded.saved_at`,
        [snapshot.name, snapshot.seq, snapshot.state, Date.now()],
      );
      await client.query(
        `DELETE FROM projection_snapshots WHERE name = $1 AND seq NOT IN
           (SELECT seq FROM projection_snapshots WHERE name = $1 ORDER BY seq DESC LIMIT $2)`,
        [snapshot.name, kept],
      );
    });
  const one = async (text: string, values: unknown[]) => (await query<Checkpoint>({ text, values }))[0] ?? null;

  return {
    every,
    kept,
    save: saveNow,
    async nearest(name, seq) {
      const history = await one('SELECT name, seq, state FROM projection_snapshots WHERE name = $1 AND seq <= $2 ORDER BY seq DESC LIMIT 1', [
        name,
        seq,
      ]);
      const checkpoint = await one('SELECT name, seq, state FROM projection_checkpoints WHERE name = $1 AND seq <= $2', [name, seq]);
      if (!history) return checkpoint;
      return checkpoint && checkpoint.seq >= history.seq ? checkpoint : history;
    },
    newestSeq: newest,
    list: () =>
      query<SnapshotInfo>({
        text: `SELECT name, seq, 'history' AS source, octet_length(state) AS bytes FROM projection_snapshots
               UNION ALL SELECT name, seq, 'checkpoint' AS source, octet_length(state) AS bytes FROM projection_checkpoints
               ORDER BY name, seq, source`,
      }),
    load: ({ name, seq, source }) =>
      one(
        `SELECT name, seq, state FROM ${source === 'checkpoint' ? 'projection_checkpoints' : 'projection_snapshots'} WHERE name = $1 AND seq = $2`,
        [name, seq],
      ),
    async archive(checkpoint) {
      const last = await newest(checkpoint.name);
      if (last !== null && checkpoint.seq < last + every) return;
      if (last === null && checkpoint.seq < every) return;
      await saveNow(checkpoint);
    },
  };
}

export function pgCheckpoints(query: Query, archive: (checkpoint: Checkpoint) => Promise<void>): CheckpointStore {
  return {
    load: async (name) =>
      (await query<Checkpoint>({ text: 'SELECT name, seq, state FROM projection_checkpoints WHERE name = $1', values: [name] }))[0] ?? null,
    list: () => query<Checkpoint>({ text: 'SELECT name, seq, state FROM projection_checkpoints ORDER BY name' }),
    save: async (c) => {
      // A checkpoint only moves forward: a board that saves an older state than another's keeps the newer.
      await query({
        text: `INSERT INTO projection_checkpoints (name, seq, state, saved_at) VALUES ($1, $2, $3, $4)
               ON CONFLICT (name) DO UPDATE SET seq = excluded.seq, state = excluded.state, saved_at = excluded.saved_at
               WHERE excluded.seq >= projection_checkpoints.seq`,
        values: [c.name, c.seq, c.state, Date.now()],
      });
      // The checkpoint is the newest snapshot; now and then one is kept as history too.
      await archive(c);
    },
  };
}
