import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { deciders } from '../../actors/registry.ts';
import { replayLog } from '../../actors/replay/replayLog.ts';
import { openSqliteStore } from '../../events/store/sqlite/sqliteEventStore.ts';
import { tempDir } from '../support/tempStore.ts';

/**
 * A board log written by runledger 0.1.0 as it was before reconnects cost one event: its computer
 * connected with three runs queued, and the board recorded one `board.run.offered` per run
 * (`runledger server`, `computer add c1`, three submits, then `daemon --server` running `echo ok`).
 */
const OLDER_BOARD = fileURLToPath(new URL('../fixtures/scenarios/olderBoard.db', import.meta.url));
/**
 * A board log written by runledger 0.1.0 (commit ba2eedd) before a reused Idempotency-Key with another
 * body was refused: `runledger server`, then two submits with one key and different prompts, both
 * answered with the first run and the second recorded as `board.run.deduplicated`.
 */
const OLDER_IDEMPOTENCY = fileURLToPath(new URL('../fixtures/scenarios/olderIdempotency.db', import.meta.url));

describe('a board log of an older version', () => {
  it('replays: a connect recorded with its per-run offers is re-derived as it was taken', async () => {
    const path = join(tempDir(), 'board.db');
    copyFileSync(OLDER_BOARD, path);
    const store = await openSqliteStore(path);
    try {
      const log = await store.readAll(0, 1000);
      expect(log.filter((e) => e.type === 'board.run.offered' && e.data.reason === 're-offered: computer c1 connected')).toHaveLength(3);
      expect(await replayLog(store, deciders)).toMatchObject({ ok: true, lastSeq: log.length });
    } finally {
      await store.close();
    }
  });

  it('replays: a key reused with another body, recorded before such a reuse was refused, is decided as it was (deduplicated)', async () => {
    const path = join(tempDir(), 'board.db');
    copyFileSync(OLDER_IDEMPOTENCY, path);
    const store = await openSqliteStore(path);
    try {
      const log = await store.readAll(0, 1000);
      const submitted = log.filter((e) => e.type === 'board.run.submitted');
      expect(submitted.map((e) => e.data.prompt)).toEqual(['first', 'second']);
      expect(log.filter((e) => e.type === 'board.run.deduplicated')).toHaveLength(1);
      expect(await replayLog(store, deciders)).toMatchObject({ ok: true, lastSeq: log.length });
    } finally {
      await store.close();
    }
  });
});
