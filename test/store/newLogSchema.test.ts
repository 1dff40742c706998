import { execFileSync } from 'node:child_process';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { migrateThroughKysely, migrateToLatest } from '../../runtime/store/sqlite/migrations.ts';
import { tempDbPath } from '../support/tempStore.ts';

/** Everything a schema is made of, as the stock sqlite3 shell and sqlite_master tell it. */
function schemaOf(path: string) {
  const db = new Database(path, { readonly: true });
  try {
    return {
      shell: execFileSync('sqlite3', [path, '.schema'], { encoding: 'utf8' }),
      objects: db.prepare('SELECT type, name, tbl_name, rootpage, sql FROM sqlite_master ORDER BY rowid').all(),
      migrations: db.prepare('SELECT name, typeof(timestamp) AS type FROM kysely_migration ORDER BY rowid').all(),
      timestamps: db.prepare<[], string>('SELECT timestamp FROM kysely_migration ORDER BY rowid').pluck().all(),
      lock: db.prepare('SELECT id, is_locked, typeof(is_locked) AS type FROM kysely_migration_lock').all(),
    };
  } finally {
    db.close();
  }
}

async function migrated(through: (db: Database.Database) => Promise<void>) {
  const path = tempDbPath();
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  await through(db);
  db.close();
  return schemaOf(path);
}

describe('the schema of a new log', () => {
  it('written at once on a new file is the one kysely’s Migrator writes: the same objects, text and pages, the same bookkeeping rows', async () => {
    const started = new Date().toISOString();
    const direct = await migrated(migrateToLatest);
    const kysely = await migrated(migrateThroughKysely);

    expect(direct.shell).toContain('CREATE TABLE IF NOT EXISTS "events"');
    expect(direct.shell).toBe(kysely.shell);
    expect(direct.objects).toEqual(kysely.objects);
    expect(direct.migrations).toEqual(kysely.migrations);
    expect(direct.migrations.length).toBe(7);
    expect(direct.lock).toEqual([{ id: 'migration_lock', is_locked: 0, type: 'integer' }]);
    expect(direct.lock).toEqual(kysely.lock);
    // Each migration is stamped with the time it ran, as an ISO string, in order.
    for (const stamps of [direct.timestamps, kysely.timestamps]) {
      expect(stamps.every((t) => new Date(t).toISOString() === t && t >= started)).toBe(true);
      expect([...stamps].sort()).toEqual(stamps);
    }
  });

  it('that cannot be written (another connection holds the write lock) fails in the words kysely’s Migrator failed in, and writes nothing', async () => {
    const failures: string[] = [];
    for (const through of [migrateToLatest, migrateThroughKysely]) {
      const path = tempDbPath();
      const holder = new Database(path);
      holder.pragma('journal_mode = WAL');
      holder.exec('BEGIN IMMEDIATE');
      const db = new Database(path);
      db.pragma('busy_timeout = 0');
      failures.push(
        await through(db).then(
          () => 'migrated',
          (error: Error) => error.message,
        ),
      );
      db.close();
      holder.exec('ROLLBACK');
      expect(holder.prepare('SELECT count(*) FROM sqlite_master').pluck().get()).toBe(0);
      holder.close();
    }
    expect(failures).toEqual([
      "could not bring the log's schema up to date: database is locked",
      "could not bring the log's schema up to date: database is locked",
    ]);
  });

  it('on a file that already holds tables, writes nothing of its own: kysely brings it forward', async () => {
    const path = tempDbPath();
    const db = new Database(path);
    db.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY)');
    await migrateToLatest(db);
    db.close();
    const { objects } = schemaOf(path);
    // kysely's Migrator made its tables after the one already there, in its order.
    expect((objects as { name: string }[]).slice(0, 3).map((o) => o.name)).toEqual([
      'notes',
      'kysely_migration',
      'sqlite_autoindex_kysely_migration_1',
    ]);
  });
});
