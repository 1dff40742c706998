/**
 * Two boards (`runledger server --db postgres://…`) on one PostgreSQL log, each a process of its own,
 * and a computer on each (docs/rules.md#postgresql-board): a run submitted to either board is pushed by the board that holds
 * its computer's stream, every run is granted and run exactly once whichever board the claims reach, a
 * lane's turns never overlap, and a board that decided on state older than the other's commit decides again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshPostgresLog, postgresLogRows } from '../support/postgresLog.ts';
import { tempDir } from '../support/tempStore.ts';
import {
  addComputer,
  addSubmitToken,
  agentFiles,
  type CliProcess,
  checkLogs,
  markerCounts,
  startComputer,
  startPostgresServer,
  submit,
  waitFor,
  waitForAllTerminal,
  waitForState,
} from './support/cluster.ts';

const logOf = postgresLogRows;

/**
 * The two boards on their log, for the file's tests: each test's computers are its own (killed as it
 * ends), on lanes of its own; the last SIGKILLs board A. The log replays and rebuilds at the end.
 */
let url: string;
let token: string;
let a: { url: string; process: CliProcess };
let b: { url: string; process: CliProcess };

beforeAll(async () => {
  url = await freshPostgresLog();
  token = await addSubmitToken(url, 'test');
  [a, b] = await Promise.all([startPostgresServer(url, [], { shared: true }), startPostgresServer(url, [], { shared: true })]);
});

afterAll(async () => {
  await Promise.all([a, b].map((board) => board?.process.stop()));
  if (a && b) await checkLogs([url]);
});

/** The ids of the computers `board` shows connected. */
async function connected(board: { url: string }): Promise<string[]> {
  return ((await (await fetch(`${board.url}/v1/status`)).json()) as { board: { connected: string[] } }).board.connected;
}

describe('two boards on one PostgreSQL log (which replays and rebuilds, exit 0, after them all)', () => {
  it('given a computer on each board, when turns of shared lanes are submitted to both at once, then each is granted and run once, and a lane’s turns never overlap', async () => {
    const dir = tempDir();
    const [t1, t2] = [await addComputer(url, 'c1'), await addComputer(url, 'c2')];
    const agent = agentFiles(dir);
    await Promise.all([
      startComputer({ dir, id: 'c1', server: a.url, token: t1, agent }),
      startComputer({ dir, id: 'c2', server: b.url, token: t2, agent }),
    ]);
    // Each board sees both computers connected: the other's through the log.
    await waitFor('both boards to see both computers', async () => (await Promise.all([a, b].map(connected))).every((ids) => ids.length === 2));

    // Three lanes, their turns submitted to both boards at once: each board decides over the lanes'
    // shared state (holder, order), and one that decided before the other's commit was seen decides again.
    const lanes = ['l1', 'l2', 'l3'];
    const runs = await Promise.all(
      Array.from({ length: 9 }, (_, i) => submit({ url: (i % 2 === 0 ? a : b).url, token }, lanes[i % 3]!, `marker=m${i} sleep=100`)),
    );
    const views = await waitForAllTerminal((i) => (i % 2 === 0 ? b : a).url, runs, 30_000);

    expect(views.map((v) => v.state)).toEqual(runs.map(() => 'succeeded'));
    expect(Object.values(markerCounts(agent.markers))).toEqual(runs.map(() => 1));
    const log = await logOf(url);
    const claims = log.filter((e) => e.type === 'board.run.claimed');
    for (const runId of runs)
      expect(
        claims.filter((e) => e.data.runId === runId),
        `claims of ${runId}`,
      ).toHaveLength(1);
    // A lane's turns one after another, whichever board granted them: each claimed once the one before finished.
    for (const lane of lanes) {
      const turns = runs.filter((_, i) => lanes[i % 3] === lane);
      const spans = turns
        .map((runId) => ({
          claimed: log.find((e) => e.type === 'board.run.claimed' && e.data.runId === runId)!.seq,
          finished: log.find((e) => e.type === 'board.run.finished' && e.data.runId === runId)!.seq,
        }))
        .sort((x, y) => x.claimed - y.claimed);
      for (let i = 1; i < spans.length; i++) expect(spans[i]!.claimed, `lane ${lane}`).toBeGreaterThan(spans[i - 1]!.finished);
    }
    // Both boards decided (each wrote), and both computers ran turns.
    expect(new Set(claims.map((e) => e.data.computerId))).toEqual(new Set(['c1', 'c2']));
  });

  it('given a computer on --server A,B, when board A is SIGKILLed with a run under way, then the computer moves to B at once, and every run is run once and ends', async () => {
    const dir = tempDir();
    const t3 = await addComputer(url, 'c3');
    const agent = agentFiles(dir);
    const computer = await startComputer({ dir, id: 'c3', server: `${a.url},${b.url}`, token: t3, agent });
    expect(computer.process.stdout).toContain(`push stream connected (to ${a.url})`);

    // B learns of the connection through the log; a run it offered before would wait for a resend.
    // The computers of the test before are gone (it killed them as it ended): c3 is B's one computer.
    await waitFor('board B to see c3 connected, alone', async () => (await connected(b)).join() === 'c3');
    const first = await submit({ url: b.url, token }, 'talk', 'marker=first sleep=1500');
    await waitForState(b.url, first, ['claimed', 'running']);
    a.process.kill('SIGKILL');
    const killedAt = Date.now();
    await computer.process.waitForOutput(new RegExp(`push stream connected \\(to ${b.url.replace(/[.]/g, '\\.')}\\)`));
    const failoverMs = Date.now() - killedAt;
    const later = await Promise.all(['one', 'two'].map((lane) => submit({ url: b.url, token }, lane, `marker=${lane} sleep=100`)));
    const runs = [first, ...later];
    const views = await waitForAllTerminal(b.url, runs, 30_000);

    expect(views.map((v) => v.state)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    expect(markerCounts(agent.markers)).toEqual({ first: 1, one: 1, two: 1 });
    // Moved on at once on the drop (no backoff first), whatever the machine's load: within a few seconds.
    expect(failoverMs).toBeLessThan(5_000);
    const log = await logOf(url);
    for (const runId of runs) expect(log.filter((e) => e.type === 'board.run.claimed' && e.data.runId === runId)).toHaveLength(1);
    process.stderr.write(`failover to the second board: ${failoverMs} ms\n`);
  });
});
