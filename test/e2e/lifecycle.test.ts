/**
 * Lives of a daemon on one log, through the real CLI (docs/rules.md#computer-behaviour, "Incarnations", "Shutdown"):
 * stopped by SIGINT and by SIGTERM, some lives idle and some with a run executing across the stop;
 * every life runs new work, nothing runs twice, and the final logs replay and rebuild (their exit
 * status through the published entry point is restart.test.ts's). The two cases wait on their lives'
 * starts and drains, each in a folder and on processes of its own: they run at once (describe.concurrent).
 */
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { tempDir } from '../support/tempStore.ts';
import { ownScope } from '../support/testScope.ts';
import {
  addComputer,
  agentFiles,
  checkLogs,
  eventsOf,
  MARKER_AGENT,
  markerCounts,
  readLog,
  startBoard,
  startComputer,
  submit,
  waitFor,
  waitForTerminal,
} from './support/cluster.ts';

const SIGNALS = ['SIGINT', 'SIGTERM'] as const;
/** Life 1 SIGINT, 2 SIGINT, 3 SIGTERM, 4 SIGTERM: with the odd lives of the embedded daemon stopped mid-run, each signal idle and mid-run. */
const signalOf = (life: number) => SIGNALS[Math.floor((life - 1) / 2) % 2]!;

describe.concurrent('the lives of a daemon on one log', () => {
  it(
    'an embedded daemon stopped four times, by SIGINT and by SIGTERM each idle and mid-run, runs new work in every life and nothing twice',
    ownScope(async ({ expect }) => {
      const dir = tempDir();
      const db = join(dir, 'daemon', 'runledger.db');
      const agent = agentFiles(dir);
      const expected: Record<string, number> = {};
      const acrossStops: string[] = [];
      for (let life = 1; life <= 4; life++) {
        const daemon = await startBoard(db, {
          command: 'daemon',
          args: ['--exec', MARKER_AGENT, '--heartbeat-s', '1', '--drain-s', '20'],
          env: agent.env,
        });
        await daemon.process.waitForOutput(/push stream connected/);
        // What the last life left executing was finished in its drain, and reported.
        for (const runId of acrossStops.splice(0)) expect(await waitForTerminal(daemon.url, runId)).toMatchObject({ state: 'succeeded' });
        const runs = await Promise.all([
          submit(daemon, 'talk', `marker=life${life}-a sleep=20`),
          submit(daemon, `lane${life}`, `marker=life${life}-b sleep=20`),
        ]);
        for (const runId of runs) expect(await waitForTerminal(daemon.url, runId)).toMatchObject({ state: 'succeeded' });
        expected[`life${life}-a`] = 1;
        expected[`life${life}-b`] = 1;
        if (life % 2 === 1) {
          acrossStops.push(await submit(daemon, 'talk', `marker=life${life}-long sleep=1500`));
          expected[`life${life}-long`] = 1;
          await waitFor('the long run to execute', () => markerCounts(agent.markers)[`life${life}-long`] === 1);
        }
        expect((await daemon.process.stop(signalOf(life))).code, daemon.process.describe()).toBe(0);
      }
      expect(acrossStops).toEqual([]);
      expect(markerCounts(agent.markers)).toEqual(expected);
      const log = readLog(db);
      expect(eventsOf(log, 'computer.started')).toHaveLength(4);
      expect(eventsOf(log, 'run.process.began')).toHaveLength(Object.keys(expected).length);
      await checkLogs([db]);
    }),
    // Four lives started one after another, beside the other case's (each several seconds on a loaded machine): its own bound.
    90_000,
  );

  it(
    'a --server computer stopped three times by SIGINT and SIGTERM, idle or mid-run, runs new work in every life and nothing twice',
    ownScope(async ({ expect }) => {
      const dir = tempDir();
      const boardDb = join(dir, 'board', 'board.db');
      const agent = agentFiles(dir);
      const board = await startBoard(boardDb);
      const token = await addComputer(boardDb, 'c1');
      const expected: Record<string, number> = {};
      let computerDb = '';
      for (let life = 1; life <= 3; life++) {
        const computer = await startComputer({ dir, id: 'c1', server: board.url, token, agent, args: ['--drain-s', '20'] });
        computerDb = computer.db;
        const runs = await Promise.all([
          submit(board, 'talk', `marker=life${life}-a sleep=20`),
          submit(board, `lane${life}`, `marker=life${life}-b sleep=20`),
        ]);
        for (const runId of runs) expect(await waitForTerminal(board.url, runId)).toMatchObject({ state: 'succeeded' });
        expected[`life${life}-a`] = 1;
        expected[`life${life}-b`] = 1;
        let long: string | null = null;
        if (life === 2) {
          long = await submit(board, 'talk', `marker=life${life}-long sleep=1500`);
          expected[`life${life}-long`] = 1;
          await waitFor('the long run to execute', () => markerCounts(agent.markers)[`life${life}-long`] === 1);
        }
        expect((await computer.process.stop(SIGNALS[life % 2]!)).code, computer.process.describe()).toBe(0);
        if (long) expect(await waitForTerminal(board.url, long)).toMatchObject({ state: 'succeeded' });
      }
      expect(markerCounts(agent.markers)).toEqual(expected);
      expect(eventsOf(readLog(computerDb), 'computer.started')).toHaveLength(3);
      expect((await board.process.stop('SIGTERM')).code).toBe(0);
      await checkLogs([boardDb, computerDb]);
    }),
    // A board and three lives of its computer started one after another, beside the other case's: its own bound.
    90_000,
  );
});
