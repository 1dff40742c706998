/**
 * Usage and live progress of real agents, end to end (docs/rules.md#wire-and-cli `usage`, heartbeat `progress`),
 * through a daemon running the Claude Code stand-in as `--exec claude`: the cost and tokens its result
 * reported reach `GET /v1/runs/{id}`, `runledger show`, `audit`, `status` (per login and lane over the
 * last day) and `/metrics`; what the agent is doing reaches `GET /v1/runs/{id}` and `runledger show
 * --follow` a line per change, within a second of the change although heartbeats go every 30 s, and
 * the log does not grow with it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentBin } from '../fixtures/agents/bin.ts';
import { runInProcess } from '../support/inProcessCli.ts';
import { tempDir } from '../support/tempStore.ts';
import { type BoardProcess, checkLogs, getRun, readLog, runCli, startBoard, startCli, submit, waitFor, waitForTerminal } from './support/cluster.ts';

const CLAUDE_USAGE = { cost_usd: 0.0123, input_tokens: 12, output_tokens: 7, cached_input_tokens: 3000 };

/** One daemon for the usage test and then the failed run's (one daemon process less). */
let dir: string;
let agents: ReturnType<typeof agentBin>;
let db: string;
let daemon: BoardProcess;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'runledger-test-'));
  agents = agentBin(dir);
  db = join(dir, 'daemon', 'runledger.db');
  // The default heartbeat (30 s): progress that arrives within the bounds below came by the extra beat on change.
  daemon = await startBoard(db, { command: 'daemon', args: ['--exec', 'claude'], env: agents.env, shared: true });
  await daemon.process.waitForOutput(/push stream connected/);
});

afterAll(async () => {
  await daemon?.process.stop();
  // Every decision that carries usage replays as recorded, and the usage projection rebuilds the same.
  if (daemon) await checkLogs([db]);
  rmSync(dir, { recursive: true, force: true });
});

describe('usage and live progress of a real agent', () => {
  it('usage reaches GET /v1/runs/{id}, show, audit, status and /metrics; progress reaches GET and show --follow, a line per change, and never the log', async () => {
    const board = ['--server', daemon.url, '--db', db];

    const first = await waitForTerminal(daemon.url, await submit(daemon, 'talk', 'hello'));
    expect(first, daemon.process.describe()).toMatchObject({ state: 'succeeded', usage: CLAUDE_USAGE });

    const [shown, status, audit] = await Promise.all([
      runInProcess(['show', first.run_id, ...board, '--json']),
      runInProcess(['status', ...board]),
      runInProcess(['audit', first.run_id, '--db', db]),
    ]);
    expect(shown.status, shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ usage: CLAUDE_USAGE });
    expect(audit.stdout).toContain('usage: cost $0.0123, tokens: 12 in, 7 out, 3000 cached');
    expect(status.stdout).toMatch(
      /usage over the last day \(since \d\d:00 UTC\):\n {2}login default: 1 run\(s\): \$0\.0123, 12 in \/ 7 out \/ 3000 cached tokens/,
    );
    expect(status.stdout).toContain('  lane talk: 1 run(s): $0.0123');
    const metrics = await (await fetch(`${daemon.url}/metrics`)).text();
    expect(metrics).toContain('# TYPE runledger_usage_cost_usd_total counter');
    expect(metrics).toContain('runledger_usage_cost_usd_total{login="default"} 0.0123');
    expect(metrics).toContain('runledger_usage_cached_input_tokens_total{login="default"} 3000');

    // Three tool calls, each held until the test saw it (the stand-in waits for gate-<k>).
    const runId = await submit(daemon, 'talk', 'work in STEPS=3');
    const follow = startCli(['show', runId.slice(0, 8), '--follow', ...board]);
    await follow.waitForOutput(/Bash: echo step 1/, 10_000);
    expect((await getRun(daemon.url, runId)) as unknown).toMatchObject({ state: 'running', progress: 'Bash: echo step 1' });
    const runRows = () => readLog(db).filter((row) => row.stream.endsWith(`run:${runId}`)).length;
    const rowsAtStep1 = runRows();
    writeFileSync(join(agents.home, 'gate-1'), '');
    await follow.waitForOutput(/Bash: echo step 2/, 10_000);
    writeFileSync(join(agents.home, 'gate-2'), '');
    await follow.waitForOutput(/Bash: echo step 3/, 10_000);
    await waitFor('step 3 on the board', async () => ((await getRun(daemon.url, runId)) as { progress?: string }).progress === 'Bash: echo step 3');
    // Three progress heartbeats and more came and went: the run's streams did not grow with them.
    expect(runRows()).toBe(rowsAtStep1);
    writeFileSync(join(agents.home, 'gate-3'), '');

    const { code } = await follow.exited;
    expect(code, follow.describe()).toBe(0);
    const lines = follow.stdout.trim().split('\n');
    const told = lines.map((line) => line.slice(10));
    expect(told.filter((line) => line.startsWith('Bash: '))).toEqual(['Bash: echo step 1', 'Bash: echo step 2', 'Bash: echo step 3']);
    expect(told).toContain('succeeded on local');
    expect(lines.at(-1)).toBe(`run ${runId} ended succeeded (cost $0.0123, tokens: 12 in, 7 out, 3000 cached)`);
    const ended = await getRun(daemon.url, runId);
    expect(ended).not.toHaveProperty('progress');
    expect(readLog(db).some((row) => JSON.stringify(row.data).includes('echo step'))).toBe(false);
  }, 60_000);

  // After the usage test: its status counts the runs of the last day.
  it('show --follow of a run that failed ends with exit 1, saying so', async () => {
    const runId = await submit(daemon, 'failing', 'please IS_ERROR');
    await waitForTerminal(daemon.url, runId);
    const follow = await runCli(['show', runId, '--follow', '--server', daemon.url, '--db', db]);
    expect(follow.status, follow.stderr).toBe(1);
    expect(follow.stdout.trim().split('\n').at(-1)).toMatch(new RegExp(`^run ${runId} ended failed: .*Credit balance is too low`));
  }, 30_000);

  it("show --follow rides out a proxy's 502 while the board behind it restarts: it follows on, and ends as the run does", async () => {
    const db = join(tempDir(), 'board', 'runledger.db');
    const board = await startBoard(db);
    const runId = await submit(board, 'talk', 'hello');
    // A proxy in front of the board that answers the first two WebSocket upgrades 502 (its upstream is
    // restarting), then passes every connection through.
    let refused = 0;
    const proxy: Server = createServer((client) => {
      client.once('data', (head) => {
        if (/^upgrade: websocket/im.test(head.toString('latin1')) && refused < 2) {
          refused++;
          client.end('HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
          return;
        }
        const upstream = connect(Number(new URL(board.url).port), '127.0.0.1', () => upstream.write(head));
        client.pipe(upstream).pipe(client);
        upstream.on('error', () => client.destroy());
        client.on('error', () => upstream.destroy());
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const address = proxy.address();
    const viaProxy = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    try {
      const follow = startCli(['show', runId, '--follow', '--server', viaProxy, '--db', db]);
      await follow.waitForOutput(/queued/, 15_000);
      expect(refused).toBe(2);
      const cancel = await fetch(`${board.url}/v1/runs/${runId}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${board.token}` } });
      expect(cancel.status).toBe(202);
      const { code } = await follow.exited;
      expect(code, follow.describe()).toBe(1);
      expect(follow.stdout.trim().split('\n').at(-1)).toMatch(new RegExp(`^run ${runId} ended cancelled`));
    } finally {
      proxy.close();
    }
  }, 30_000);
});
