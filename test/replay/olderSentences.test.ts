import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { describeEvent } from '../../projections/audit/describeEvent.ts';
import { deciders } from '../../replay/deciders.ts';
import { replayLog } from '../../replay/replayLog.ts';
import { openSqliteStore } from '../../runtime/store/sqlite/sqliteEventStore.ts';
import { recordAdoptionsAndNotices } from '../fixtures/scenarios/adoptionsAndNotices.ts';
import { tempDir } from '../support/tempStore.ts';

/**
 * A board log written by the version whose adoptions and notices recorded their reasons as sentences
 * (main at c2b731e): every reason of both groups, through the real rounds (adoptionsAndNotices.ts).
 */
const OLDER_SENTENCES = fileURLToPath(new URL('../fixtures/scenarios/olderSentences.db', import.meta.url));

/** What the audit said of each adoption and inbox decision when the log was written. */
const SAID: [seq: number, words: string][] = [
  [9, 'claimed by board:999999 to bind session S1 (listed on c7) (until 00:15:00)'],
  [11, 'claimed by board:4242 to bind session S1 (listed on c7), after the claim of board:999999 lapsed (until 00:30:00)'],
  [13, "adopted: lane L's next turns run in session S1 on c7"],
  [20, 'session S2 is not listed on any computer: it waits up to 180 s from the request (until 00:18:01)'],
  [22, 'the session listing could not be read (tmux: server busy): it waits up to 180 s from the request (until 00:18:01)'],
  [24, 'claimed by board:4242 to bind session S1 (listed on c7) (until 00:30:01)'],
  [26, 'the adoption of session S1 failed: the bind failed: tmux: no such pane'],
  [28, 'the adoption of session S2 failed: session S2 is not listed on any computer, 180 s after the request'],
  [30, 'the adoption of session S3 failed: the session listing could not be read (tmux: server busy), 180 s after the request'],
  [32, 'session S8 is filed nothing: the board never saw it run, and it reads stopped; 1 notice waits until it runs again'],
  [34, 'the liveness of session S9 could not be read (tmux: server busy): 1 notice waits until it can be'],
];

const REASONED = /^(adoption\.(claimed|waiting|adopted|failed)|inbox\.(waiting|withheld))$/;

describe('a log whose adoptions and notices recorded sentences', () => {
  it('replays whole, and the audit reads each decision in the words it was recorded with', async () => {
    const path = join(tempDir(), 'board.db');
    copyFileSync(OLDER_SENTENCES, path);
    const store = await openSqliteStore(path);
    try {
      const log = await store.readAll(0, 1000);
      const decisions = log.filter((e) => REASONED.test(e.type));
      expect(decisions.every((e) => typeof (e.data as { reason: unknown }).reason === 'string')).toBe(true);
      expect(decisions.map((e) => [e.seq, describeEvent(e)])).toEqual(SAID);
      expect(await replayLog(store, deciders)).toMatchObject({ ok: true, lastSeq: log.length });
    } finally {
      await store.close();
    }
  });

  it('recorded again now, holds codes where it held sentences, reads the same words, and replays', async () => {
    const path = join(tempDir(), 'board.db');
    await recordAdoptionsAndNotices(path);
    const store = await openSqliteStore(path);
    try {
      const log = await store.readAll(0, 1000);
      const decisions = log.filter((e) => REASONED.test(e.type));
      expect(decisions.every((e) => typeof (e.data as { reason: unknown }).reason === 'object')).toBe(true);
      expect(decisions.map((e) => [e.seq, describeEvent(e)])).toEqual(SAID);
      expect(await replayLog(store, deciders)).toMatchObject({ ok: true, lastSeq: log.length });
    } finally {
      await store.close();
    }
  });
});
