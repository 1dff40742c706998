/**
 * Two daemons joining one board as one computer (a copied config: same id, same token, each its own
 * log on its own machine). docs/rules.md#wire-and-cli: the board keeps one push stream per computer id, so the
 * second is refused (4409) and exits 2 saying so, and every run is executed once.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/tempStore.ts';
import {
  addComputer,
  agentFiles,
  checkLogs,
  MARKER_AGENT,
  markerCounts,
  startBoard,
  startCli,
  startComputer,
  submit,
  waitForTerminal,
} from './support/cluster.ts';

describe('twins: two daemons with one computer id', () => {
  it('refuses the second stream (exit 2, naming why) and executes every run once', async () => {
    const dir = tempDir();
    const board = await startBoard(join(dir, 'board', 'board.db'));
    const token = await addComputer(board.db, 'twin');
    const agent = agentFiles(dir);
    const first = await startComputer({ dir: join(dir, 'a'), id: 'twin', server: board.url, token, agent });

    const second = startCli(
      [
        'daemon',
        '--server',
        board.url,
        '--computer',
        'twin',
        '--token',
        token,
        '--db',
        join(dir, 'b', 'twin.db'),
        '--heartbeat-s',
        '1',
        '--exec',
        MARKER_AGENT,
      ],
      agent.env,
    );
    const exit = await second.exited;
    expect(exit.code, second.describe()).toBe(2);
    expect(second.stdout + second.stderr).toMatch(/another daemon is connected .* as computer twin/);

    const runs = await Promise.all(
      ['l1', 'l2', 'l3', 'l4'].flatMap((lane) => [1, 2].map((n) => submit(board, lane, `marker=${lane}-${n} sleep=50`))),
    );
    const views = await Promise.all(runs.map((runId) => waitForTerminal(board.url, runId)));
    expect(views.map((v) => v.state)).toEqual(runs.map(() => 'succeeded'));
    const counts = markerCounts(agent.markers);
    expect(Object.values(counts)).toHaveLength(8);
    expect(
      Object.values(counts).every((n) => n === 1),
      JSON.stringify(counts),
    ).toBe(true);
    expect(first.process.alive).toBe(true);
    await first.process.stop('SIGTERM');
    await checkLogs([board.db, first.db]);
  });
});
