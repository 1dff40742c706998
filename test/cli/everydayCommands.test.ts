/**
 * Issue 29: the everyday commands through the real binary, against one real daemon running the Claude
 * Code stand-in (`--exec claude`, which reports a cost of $0.0123 a turn): `runs` lists the board's
 * runs newest first, live and finished alike, with filters; `show` prints a run for a person (`--json`
 * as before); `show --follow` prints the agent's activity and then the reply; `lane` prints a lane's
 * conversation oldest turn first. Bad filters are refused naming them: exit 2, and 400 on the API.
 * Each command through the real binary at least once; its other calls in this process, through the
 * same dispatch (test/support/inProcessCli.ts): a process each cost a third of a second of CPU.
 */

import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliProcess, freePort, getRun, startCli, waitFor, waitForState } from '../e2e/support/cluster.ts';
import { agentBin } from '../fixtures/agents/bin.ts';
import { runInProcess } from '../support/inProcessCli.ts';

interface Row {
  run_id: string;
  lane: string;
  state: string;
  computer_id?: string;
  prompt: string;
  reply?: string;
  error?: string;
  usage?: { cost_usd?: number };
  duration_ms?: number;
  finished_at?: string;
  progress?: string;
}

describe('the everyday commands: runs, show, lane', () => {
  let dir: string;
  let home: string;
  let daemon: CliProcess;
  let url: string;
  let token: string;
  let board: string[];
  /** The runs of the fixture, by what they are. */
  const runs = { hello: '', andThen: '', failed: '', cancelled: '', running: '', queued: '' };

  const submit = async (lane: string, prompt: string): Promise<string> => {
    const response = await fetch(`${url}/v1/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ lane, prompt }),
    });
    expect(response.status).toBe(201);
    return ((await response.json()) as { run_id: string }).run_id;
  };
  /** `runledger …` with `env`, to its end (bounded). */
  const cli = async (args: readonly string[], env: Record<string, string> = {}) => {
    const run = startCli([...args, ...board], env);
    const timer = setTimeout(() => run.kill('SIGKILL'), 20_000);
    const { code } = await run.exited;
    clearTimeout(timer);
    return { status: code, stdout: run.stdout, stderr: run.stderr };
  };
  /** `runledger …` in this process, against the board. */
  const local = (args: readonly string[]) => runInProcess([...args, ...board]);
  const json = async <T = Row[]>(args: readonly string[]): Promise<T> => {
    const result = await local([...args, '--json']);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    return JSON.parse(result.stdout) as T;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'runledger-everyday-'));
    const agents = agentBin(dir);
    home = agents.home;
    const db = join(dir, 'board', 'runledger.db');
    mkdirSync(join(dir, 'board'));
    const port = await freePort();
    daemon = new CliProcess(['daemon', '--db', db, '--port', String(port), '--exec', 'claude'], agents.env);
    await daemon.waitForOutput(/push stream connected/);
    url = `http://127.0.0.1:${port}`;
    token = readFileSync(join(dir, 'board', 'token'), 'utf8').trim();
    board = ['--server', url, '--db', db];

    // Finished: two turns of `talk` (the first with a prompt of two lines), a failed turn, and a run
    // cancelled before any computer took it (its agent never ran: its cost is unknown).
    runs.hello = await submit('talk', 'hello there, what broke in the last deploy of the web app?\nand a second line');
    await waitForState(url, runs.hello, ['succeeded']);
    runs.andThen = await submit('talk', 'and then?');
    await waitForState(url, runs.andThen, ['succeeded']);
    runs.failed = await submit('oops', 'please IS_ERROR');
    await waitForState(url, runs.failed, ['failed']);
    // Live: a turn of `talk` held at its first tool call (until gate-1), and the lane's next turn behind it.
    runs.running = await submit('talk', 'work in STEPS=1');
    await waitFor(
      'the held turn to say what it does',
      async () => ((await getRun(url, runs.running)) as { progress?: string }).progress === 'Bash: echo step 1',
    );
    runs.queued = await submit('talk', 'after that');
    runs.cancelled = await submit('later', 'never mind');
    const cancel = await fetch(`${url}/v1/runs/${runs.cancelled}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    expect(cancel.status).toBe(202);
    await waitForState(url, runs.cancelled, ['cancelled']);
  }, 30_000);

  afterAll(async () => {
    await daemon?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs: newest first, the live ones (not finished yet) ahead of the finished; short id, lane, state, computer, finished, took, cost (unknown as –), the first line of the prompt', async () => {
    const listed = await cli(['runs'], { COLUMNS: '200' });

    expect(listed.stderr).toBe('');
    expect(listed.status).toBe(0);
    const lines = listed.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^RUN\s+LANE\s+STATE\s+COMPUTER\s+FINISHED \(UTC\)\s+TOOK\s+COST\s+PROMPT$/);
    const cells = lines.slice(1).map((line) => line.split(/ {2,}/));
    expect(cells.map((c) => c[0])).toEqual(
      [runs.queued, runs.running, runs.cancelled, runs.failed, runs.andThen, runs.hello].map((id) => id.slice(0, 8)),
    );
    expect(cells[0]).toEqual([runs.queued.slice(0, 8), 'talk', 'queued', '–', '–', '–', '–', 'after that']);
    expect(cells[1]!.slice(0, 4)).toEqual([runs.running.slice(0, 8), 'talk', 'running', 'local']);
    expect(cells[2]).toEqual([
      runs.cancelled.slice(0, 8),
      'later',
      'cancelled',
      '–',
      expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d$/),
      '–',
      '–',
      'never mind',
    ]);
    expect(cells[3]!.slice(2)).toEqual([
      'failed',
      'local',
      expect.stringMatching(/^\d{4}-/),
      expect.stringMatching(/ s$/),
      '$0.0123',
      'please IS_ERROR',
    ]);
    expect(cells[5]!.slice(6)).toEqual(['$0.0123', 'hello there, what broke in the last deploy of the web app?']);
  });

  it('runs: the prompt is cut to what the line has left, with an ellipsis', async () => {
    const narrow = await cli(['runs', '--lane', 'talk', '--state', 'succeeded'], { COLUMNS: '100' });

    expect(narrow.status).toBe(0);
    const lines = narrow.stdout.trimEnd().split('\n');
    expect(lines.every((line) => line.length <= 100)).toBe(true);
    const hello = lines.find((line) => line.startsWith(runs.hello.slice(0, 8)))!;
    expect(hello).toMatch(/ {2}hello there, what b[^\n]*…$/);
    expect(hello).not.toContain('web app?');
  });

  it('runs --json: each filter (lane, state, computer, limit) narrows the list, newest first', async () => {
    const [talk, running, failed, local, nobody, two, all, deploy, steps] = await Promise.all([
      json(['runs', '--lane', 'talk']),
      json(['runs', '--state', 'running']),
      json(['runs', '--state', 'failed']),
      json(['runs', '--computer', 'local']),
      json(['runs', '--computer', 'nobody']),
      json(['runs', '--limit', '2']),
      json(['runs', '--limit', '1000']),
      json(['runs', '--text', 'LAST DEPLOY']),
      json(['runs', '--text', 'steps=1']),
    ]);

    expect(talk.map((r) => r.run_id)).toEqual([runs.queued, runs.running, runs.andThen, runs.hello]);
    expect(running).toEqual([
      expect.objectContaining({ run_id: runs.running, state: 'running', computer_id: 'local', progress: 'Bash: echo step 1' }),
    ]);
    expect(failed).toEqual([
      expect.objectContaining({ run_id: runs.failed, lane: 'oops', state: 'failed', usage: expect.objectContaining({ cost_usd: 0.0123 }) }),
    ]);
    expect(failed[0]!.error).toContain('Credit balance is too low');
    expect(local.map((r) => r.run_id)).toEqual([runs.running, runs.failed, runs.andThen, runs.hello]);
    expect(nobody).toEqual([]);
    expect(two.map((r) => r.run_id)).toEqual([runs.queued, runs.running]);
    expect(all).toHaveLength(6);
    // Text in the prompt, the reply or the error, in any case: finished and live runs alike.
    expect(deploy.map((r) => r.run_id)).toEqual([runs.hello]);
    expect(steps.map((r) => r.run_id)).toEqual([runs.running]);
    // Unknown is absent, not zero: the cancelled run reported no cost, and took no time on any computer.
    const cancelled = all.find((r) => r.run_id === runs.cancelled)!;
    expect(cancelled).not.toHaveProperty('usage');
    expect(cancelled).not.toHaveProperty('duration_ms');
    expect(all.find((r) => r.run_id === runs.hello)).toMatchObject({
      prompt: 'hello there, what broke in the last deploy of the web app?\nand a second line',
      usage: { cost_usd: 0.0123 },
    });
  });

  it('GET /v1/runs pages with before = next, from the live runs on to the finished ones, each run once and in the same order', async () => {
    const whole = (await (await fetch(`${url}/v1/runs?limit=100`)).json()) as { runs: Row[]; next: string | null };
    expect(whole.next).toBeNull();
    const paged: string[] = [];
    let before: string | null = null;
    for (let page = 0; page < 10; page++) {
      const answer = (await (await fetch(`${url}/v1/runs?limit=1${before ? `&before=${before}` : ''}`)).json()) as {
        runs: Row[];
        next: string | null;
      };
      paged.push(...answer.runs.map((r) => r.run_id));
      if (answer.next === null) break;
      before = answer.next;
    }

    expect(paged).toEqual(whole.runs.map((r) => r.run_id));
    expect(paged).toHaveLength(6);
  });

  it('bad filters are refused naming them: exit 2 from the CLI, 400 invalid_query from the API', async () => {
    const [state, laneId, computer, limit, words] = await Promise.all([
      local(['runs', '--state', 'done']),
      local(['runs', '--lane', 'no/such']),
      local(['runs', '--computer', 'a b']),
      local(['runs', '--limit', '0']),
      local(['runs', '--text', 'x'.repeat(201)]),
    ]);
    expect(words.status).toBe(2);
    expect(words.stderr).toContain('--text wants 1 to 200 characters, not 201');
    expect(state.status).toBe(2);
    expect(state.stderr).toContain("option '--state <state>' argument 'done' is invalid. Allowed choices are queued, claimed, running, succeeded");
    expect(laneId.status).toBe(2);
    expect(laneId.stderr).toContain('--lane wants an id matching ^[A-Za-z0-9-]{1,64}$, not "no/such"');
    expect(computer.status).toBe(2);
    expect(computer.stderr).toContain('--computer wants an id matching');
    expect(limit.status).toBe(2);
    expect(limit.stderr).toContain('--limit wants a whole number ≥ 1, not "0"');

    const refusals = await Promise.all(
      [
        'state=done',
        'lane=no%2Fsuch',
        'computer=a%20b',
        'limit=0',
        'limit=101',
        'before=yesterday',
        'texts=all',
        'sate=failed',
        `q=${'x'.repeat(201)}`,
        'prefix=abcdef&lane=talk',
      ].map(async (query) => {
        const response = await fetch(`${url}/v1/runs?${query}`);
        return [query, response.status, ((await response.json()) as { detail: { error: string; message: string } }).detail] as const;
      }),
    );
    for (const [query, status, detail] of refusals) {
      expect(status, query).toBe(400);
      expect(detail.error, query).toBe('invalid_query');
    }
    const said = Object.fromEntries(refusals.map(([query, , detail]) => [query, detail.message]));
    expect(said['state=done']).toBe('state must be one of queued, claimed, running, succeeded, failed, cancelled, resolved, not "done"');
    expect(said['lane=no%2Fsuch']).toBe('lane must be a lane id, matching ^[A-Za-z0-9-]{1,64}$, not "no/such"');
    expect(said['limit=101']).toBe('limit must be a whole number from 1 to 100, not "101"');
    expect(said['before=yesterday']).toContain('before must be the `next` of the page before');
    expect(said['texts=all']).toBe('texts must be excerpt or whole, not "all"');
    expect(said[`q=${'x'.repeat(201)}`]).toBe('q (the text searched for) must be at most 200 characters');
    expect(said['sate=failed']).toBe('GET /v1/runs takes lane, state, computer, q, limit, before, texts (or prefix alone), not "sate"');
    expect(said['prefix=abcdef&lane=talk']).toContain('takes no other parameter');
  });

  it('show prints the run for a person: state, lane, computer, times, took, cost, prompt, reply; --json is the board’s GET /v1/runs/{id}, as before', async () => {
    const [shown, asJson, failed, cancelled, running, waiting] = await Promise.all([
      cli(['show', runs.hello.slice(0, 8)]),
      local(['show', runs.hello, '--json']),
      local(['show', runs.failed]),
      local(['show', runs.cancelled]),
      local(['show', runs.running]),
      local(['show', runs.queued]),
    ]);

    expect(shown.stderr).toBe('');
    expect(shown.status).toBe(0);
    const text = shown.stdout;
    expect(text).toContain(`run        ${runs.hello}\nstate      succeeded\nlane       talk\ncomputer   local\n`);
    expect(text).toMatch(/\nsubmitted {2}\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\nstarted {4}\d{4}-.* UTC\nfinished {3}\d{4}-.* UTC\ntook {7}\d/);
    expect(text).toContain('\ncost       cost $0.0123, tokens: 12 in, 7 out, 3000 cached\n');
    expect(text).toContain(
      '\n\nprompt:\nhello there, what broke in the last deploy of the web app?\nand a second line\n\nreply:\nturn 1 (claude-sonnet-4-5): and a second line\n',
    );
    expect(JSON.parse(asJson.stdout)).toEqual(await getRun(url, runs.hello));
    expect(failed.stdout).toMatch(/\n\nerror:\n.*Credit balance is too low/);
    expect(cancelled.stdout).toContain('\ncomputer   none\n');
    expect(cancelled.stdout).toContain('\ncost       unknown (its agent reported none)\n');
    expect(cancelled.stdout).not.toContain('took');
    expect(running.stdout).toMatch(/\nstate {6}running\n(.*\n)*cost {7}not known until it ends\ndoing {6}Bash: echo step 1\n/);
    expect(waiting.stdout).toContain('\ncomputer   none yet\n');
    expect(waiting.stdout).not.toContain('started');
  });

  it('lane: the conversation as a transcript, oldest turn first, each prompt then its reply; --json the same as a list; --last; a lane with no run is a finding (exit 1)', async () => {
    const [transcript, listed, last, none] = await Promise.all([
      cli(['lane', 'talk']),
      json(['lane', 'talk']),
      json(['lane', 'talk', '--last', '2']),
      local(['lane', 'nobody-here']),
    ]);

    expect(transcript.stderr).toBe('');
    expect(transcript.status).toBe(0);
    const turns = transcript.stdout.split('\n── ');
    expect(turns[0]).toBe('lane talk: 4 turns, oldest first\n');
    expect(turns[1]).toMatch(
      new RegExp(`^${runs.hello.slice(0, 8)} · succeeded on local · \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d · [\\d.]+ s · \\$0\\.0123\\n`),
    );
    expect(turns[1]).toContain(
      '\n> hello there, what broke in the last deploy of the web app?\n> and a second line\n\nturn 1 (claude-sonnet-4-5): and a second line\n',
    );
    expect(turns[2]).toContain('\n> and then?\n\nturn 2 (claude-sonnet-4-5): and then?\n');
    expect(turns[3]).toMatch(/^\S+ · running on local · .*\n> work in STEPS=1\n\n\(running: Bash: echo step 1\)\n/);
    expect(turns[4]).toMatch(/^\S+ · queued · .*\n> after that\n\n\(waiting for its turn\)\n$/);
    expect(listed.map((r) => r.run_id)).toEqual([runs.hello, runs.andThen, runs.running, runs.queued]);
    expect(listed[0]).toMatchObject({
      prompt: 'hello there, what broke in the last deploy of the web app?\nand a second line',
      reply: 'turn 1 (claude-sonnet-4-5): and a second line',
    });
    expect(last.map((r) => r.run_id)).toEqual([runs.running, runs.queued]);
    expect(none.status).toBe(1);
    expect(none.stderr).toBe(`runledger: the board at ${url} has no run in lane nobody-here\n`);
  });

  // Last: it lets the held turn finish.
  it('show --follow prints what the agent does as it does it, then its reply, then how it ended', async () => {
    const follow = startCli(['show', runs.running.slice(0, 8), '--follow', ...board]);
    await follow.waitForOutput(/Bash: echo step 1/, 10_000);
    writeFileSync(join(home, 'gate-1'), '');
    const { code } = await follow.exited;

    expect(code, follow.describe()).toBe(0);
    const lines = follow.stdout.trimEnd().split('\n');
    expect(lines.map((line) => line.slice(10)).filter((line) => line.startsWith('Bash: '))).toEqual(['Bash: echo step 1']);
    expect(follow.stdout).toMatch(/\n\nreply:\nturn 3 \(claude-sonnet-4-5\): work in STEPS=1\n\nrun \S+ ended succeeded \(cost \$0\.0123/);
    expect(lines.at(-1)).toBe(`run ${runs.running} ended succeeded (cost $0.0123, tokens: 12 in, 7 out, 3000 cached)`);
    await waitForState(url, runs.queued, ['succeeded']);
  });

  it('against a board older than the list: runs says to upgrade the board (exit 2); show falls back to what GET /v1/runs/{id} says', async () => {
    const runId = 'c0ffee00-0000-4000-8000-000000000001';
    // What a board of the last release answers: the prefix lookup, the run's view, and no list or details route.
    const old = createServer((request, response) => {
      const at = new URL(request.url ?? '/', 'http://board');
      const send = (status: number, body: unknown) => response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (at.pathname === '/v1/runs' && at.searchParams.has('prefix')) return send(200, { run_ids: [runId] });
      if (at.pathname === '/v1/runs') return send(400, { detail: { error: 'invalid_prefix', message: 'GET /v1/runs wants ?prefix=' } });
      if (at.pathname === `/v1/runs/${runId}`) return send(200, { run_id: runId, lane: 'talk', state: 'succeeded', computer_id: 'c1', reply: 'hi' });
      return send(404, { detail: { error: 'not_found', message: `no route GET ${at.pathname}` } });
    });
    await new Promise<void>((resolve) => old.listen(0, '127.0.0.1', resolve));
    const oldUrl = `http://127.0.0.1:${(old.address() as AddressInfo).port}`;
    try {
      const listed = await runInProcess(['runs', '--server', oldUrl, '--db', join(dir, 'board', 'runledger.db')]);
      const shown = await runInProcess(['show', runId.slice(0, 8), '--server', oldUrl, '--db', join(dir, 'board', 'runledger.db')]);
      expect(listed.status).toBe(2);
      expect(listed.stderr).toBe(
        `runledger: the board at ${oldUrl} is older than this runledger and lists no runs (GET /v1/runs): upgrade the board\n`,
      );
      expect(shown.stderr).toBe('');
      expect(shown.status).toBe(0);
      expect(shown.stdout).toContain(`run       ${runId}\nstate     succeeded\nlane      talk\ncomputer  c1\n`);
      expect(shown.stdout).toContain('\n\nreply:\nhi\n(the board at');
    } finally {
      old.close();
    }
  });
});
