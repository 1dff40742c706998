import type Database from 'better-sqlite3';
import type { Checkpoint, SnapshotInfo, SnapshotStore } from '../eventStore.ts';
import { onFirstUse } from './onFirstUse.ts';

export interface SnapshotPolicy {
  /** A checkpoint at least this many events past the newest snapshot of its name is kept as one. */
  readonly every?: number;
  /** History snapshots kept per name, newest first. */
  readonly kept?: number;
}

/**
 * 25,000 events fold in a fraction of a second (all projections, every decision re-derived), so no fold
 * as of a seq the history covers starts further back; twelve of them cover the last 300,000 events.
 */
export const SNAPSHOT_EVERY = 25_000;
export const SNAPSHOTS_KEPT = 12;

/**
 * The snapshot history in `projection_snapshots` (migration 0005), read together with
 * `projection_checkpoints`: a name's checkpoint is its newest snapshot.
 */
export function sqliteSnapshots(db: Database.Database, policy: SnapshotPolicy = {}): SnapshotStore & { archive(checkpoint: Checkpoint): void } {
  const every = policy.every ?? SNAPSHOT_EVERY;
  const kept = policy.kept ?? SNAPSHOTS_KEPT;
  const insert = onFirstUse(() =>
    db.prepare<[string, number, string, number]>(
      `INSERT INTO projection_snapshots (name, seq, state, saved_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (name, seq) DO UPDATE SET state = excluded.state, saved_at = excluded.saved_at`,
    ),
  );
  const prune = onFirstUse(() =>
    db.prepare<[string, string, number]>(
      `DELETE FROM projection_snapshots WHERE name = ? AND seq NOT IN
       (SELECT seq FROM projection_snapshots WHERE name = ? ORDER BY seq DESC LIMIT ?)`,
    ),
  );
  const newest = onFirstUse(() => db.prepare<[string], number | null>('SELECT max(seq) FROM projection_snapshots WHERE name = ?').pluck());
  const nearestInHistory = onFirstUse(() =>
    db.prepare<[string, number], Checkpoint>(
      'SELECT name, seq, state FROM projection_snapshots WHERE name = ? AND seq <= ? ORDER BY seq DESC LIMIT 1',
    ),
  );
  const checkpointAtOrBefore = onFirstUse(() =>
    db.prepare<[string, number], Checkpoint>('SELECT name, seq, state FROM projection_checkpoints WHERE name = ? AND seq <= ?'),
  );
  const listAll = onFirstUse(() =>
    db.prepare<[], SnapshotInfo>(
      `SELECT name, seq, 'history' AS source, length(CAST(state AS BLOB)) AS bytes FROM projection_snapshots
     UNION ALL SELECT name, seq, 'checkpoint' AS source, length(CAST(state AS BLOB)) AS bytes FROM projection_checkpoints
     ORDER BY name, seq, source`,
    ),
  );
  const loadHistory = onFirstUse(() =>
    db.prepare<[string, number], Checkpoint>('SELECT name, seq, state FROM projection_snapshots WHERE name = ? AND seq = ?'),
  );
  const loadCheckpoint = onFirstUse(() =>
    db.prepare<[string, number], Checkpoint>('SELECT name, seq, state FROM projection_checkpoints WHERE name = ? AND seq = ?'),
  );
  const saveNow = onFirstUse(() =>
    db.transaction((snapshot: Checkpoint) => {
      // Bookkeeping, not a decision: the save time is the wall clock's.
      insert().run(snapshot.name, snapshot.seq, snapshot.state, Date.now());
      prune().run(snapshot.name, snapshot.name, kept);
    }),
  );

  return {
    every,
    kept,
    save: async (snapshot) => void saveNow().immediate(snapshot),
    async nearest(name, seq) {
      const history = nearestInHistory().get(name, seq);
      const checkpoint = checkpointAtOrBefore().get(name, seq);
      if (!history) return checkpoint ?? null;
      return checkpoint && checkpoint.seq >= history.seq ? checkpoint : history;
    },
    newestSeq: async (name) => newest().get(name) ?? null,
    list: async () => listAll().all(),
    load: async ({ name, seq, source }) => (source === 'checkpoint' ? loadCheckpoint().get(name, seq) : loadHistory().get(name, seq)) ?? null,
    /** Called as a checkpoint is saved: keeps it in the history too when the newest one there is `every` events older. */
    archive(checkpoint) {
      const last = newest().get(checkpoint.name) ?? null;
      if (last !== null && checkpoint.seq < last + every) return;
      if (last === null && checkpoint.seq < every) return;
      saveNow().immediate(checkpoint);
    },
  };
}
