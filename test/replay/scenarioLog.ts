import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import type { DomainEvent } from '../../events/catalog.ts';
import { openSqliteStore, type SqliteEventStore, type SqliteStoreOptions } from '../../runtime/store/sqlite/sqliteEventStore.ts';
import { tempDir } from '../support/tempStore.ts';

/** The recorded scenario (see test/fixtures/scenarios/record.ts): committed, never written by a test. */
export const SCENARIO = fileURLToPath(new URL('../fixtures/scenarios/twoComputers.db', import.meta.url));

/** A copy of the scenario log in a temp folder of its own: opening a log brings its schema forward. */
export function scenarioCopy(): string {
  const path = join(tempDir(), 'scenario.db');
  copyFileSync(SCENARIO, path);
  return path;
}

/** A copy of the scenario with `edit` run on it, the append-only triggers dropped (as a tamperer would). */
export function tamperedScenario(edit: (db: Database.Database) => void): string {
  const path = scenarioCopy();
  const db = new Database(path);
  try {
    db.exec('DROP TRIGGER events_no_update; DROP TRIGGER events_no_delete;');
    edit(db);
  } finally {
    db.close();
  }
  return path;
}

export async function openScenario(path = scenarioCopy(), options: SqliteStoreOptions = {}): Promise<SqliteEventStore> {
  return openSqliteStore(path, options);
}

/** The seq of the one event of `type` about `runId` (in `stream`, when given). */
export function seqOf(log: readonly DomainEvent[], type: string, runId: string, stream?: string): number {
  const found = log.filter((e) => e.type === type && (e.data as { runId?: string }).runId === runId && (stream === undefined || e.stream === stream));
  if (found.length !== 1) throw new Error(`${found.length} events ${type} of ${runId} in the scenario, not one`);
  return found[0]!.seq;
}
