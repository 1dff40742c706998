/**
 * A login's usage limit through a real daemon (docs/rules.md#computer-behaviour, "Execution"), with the stand-ins of
 * Claude Code and Codex printing their limits as the CLIs do, the reset three seconds ahead: the run is
 * not failed but waits, still claimed, until the reset its agent gave; its login starts nothing
 * meanwhile while another login's run goes on; then it runs again, resuming its session, and its reply
 * is posted. A restart of the daemon while it waits keeps the wait (everything is in the log): its
 * drain does not wait for it, and the next life runs it once its reset has passed; and
 * `replay` re-derives every decision. The cases wait out their resets, each on a daemon and a log of
 * its own: they run at once (describe.concurrent).
 */
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { agentBin } from '../fixtures/agents/bin.ts';
import { tempDir } from '../support/tempStore.ts';
import { ownScope } from '../support/testScope.ts';
import { type BoardProcess, checkLogs, eventsOf, freePort, readLog, startBoard, waitFor, waitForTerminal } from './support/cluster.ts';

async function submitAs(board: BoardProcess, lane: string, prompt: string, agent: string): Promise<string> {
  const response = await fetch(`${board.url}/v1/runs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${board.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ lane, prompt, agent_id: agent }),
  });
  const body = (await response.json()) as { run_id?: string };
  if (response.status !== 201 || !body.run_id) throw new Error(`submit answered ${response.status}: ${JSON.stringify(body)}`);
  return body.run_id;
}

const waitingFor = (db: string, runId: string) =>
  waitFor(`run ${runId} to wait out its usage limit`, async () => eventsOf(readLog(db), 'run.limit.waiting', runId)[0] ?? null);

const cases = [
  { exec: 'claude', model: 'claude-sonnet-4-5', said: "You've hit your limit · resets 2pm (UTC)" },
  { exec: 'codex', model: 'gpt-5-codex', said: 'usage_limit_reached' },
] as const;

describe.concurrent('a usage limit, through a daemon', () => {
  for (const { exec, model, said } of cases)
    it(
      `--exec ${exec}: parks the login until its reset, runs another login meanwhile, then answers`,
      ownScope(async ({ expect }) => {
        const dir = tempDir();
        const agents = agentBin(dir);
        const db = join(dir, 'daemon', 'runledger.db');
        const daemon = await startBoard(db, {
          command: 'daemon',
          args: ['--exec', exec, '--slots', '3', '--heartbeat-s', '1'],
          // Long enough for bob's turn to start inside it on a loaded machine; short enough to wait out.
          env: { ...agents.env, STANDIN_LIMIT_RESET_S: '3' },
        });
        await daemon.process.waitForOutput(/push stream connected/);

        const limited = await submitAs(daemon, 'talk', 'USAGE_LIMIT hello', 'alice');
        const wait = await waitingFor(db, limited);
        expect(wait.data).toMatchObject({ login: 'alice', strikes: 1, logged: true });
        expect(String(wait.data.words)).toContain(said);
        const until = Number(wait.data.notBefore);
        expect(until).toBeGreaterThan(wait.at);

        // While it waits, the status says the login is limited, with the agent's words (once its projection has
        // read what the log file already shows); alice starts nothing, bob does.
        type Status = { computers: Record<string, { limits: Record<string, unknown> } | undefined> };
        const [limit, vetoed, other] = await Promise.all([
          waitFor('the status to show alice limited', async () => {
            const status = (await (
              await fetch(`${daemon.url}/v1/status`, { headers: { authorization: `Bearer ${daemon.token}` } })
            ).json()) as Status;
            return status.computers.local?.limits.alice;
          }),
          submitAs(daemon, 'other', 'hi', 'alice'),
          submitAs(daemon, 'third', 'hi', 'bob'),
        ]);
        expect(limit).toEqual({ until, words: wait.data.words });
        expect(await waitForTerminal(daemon.url, other)).toMatchObject({ state: 'succeeded' });

        const answered = await waitForTerminal(daemon.url, limited);
        expect(answered, daemon.process.describe()).toMatchObject({ state: 'succeeded', reply: `turn 1 (${model}): USAGE_LIMIT hello` });
        expect(await waitForTerminal(daemon.url, vetoed)).toMatchObject({ state: 'succeeded' });

        const log = readLog(db);
        // Run again once, at or after the reset, resuming the session its agent announced; alice's other run after it too.
        const spawns = eventsOf(log, 'run.execution.requested', limited);
        const announced = eventsOf(log, 'run.session.announced', limited)[0]?.data.sessionId;
        expect(spawns.map((e) => e.data.resume)).toEqual([null, announced]);
        expect(spawns[1]!.at).toBeGreaterThanOrEqual(until);
        expect(eventsOf(log, 'run.process.began', vetoed)[0]!.at).toBeGreaterThanOrEqual(until);
        expect(eventsOf(log, 'run.process.began', other)[0]!.at).toBeLessThan(until);
        // The daemon said the wait once, with the agent's words; the limited turn was never completed as such.
        expect(daemon.process.stdout.match(/reached its usage limit, until the reset its agent gave .*“.+”/g)).toHaveLength(1);
        expect(eventsOf(log, 'run.limit.waiting')).toHaveLength(1);
        expect(eventsOf(log, 'run.completion.requested', limited)).toHaveLength(1);
        await daemon.process.stop();
        await checkLogs([db]);
      }),
    );

  it(
    'a restart while it waits: the drain does not wait for it, and a life started after its reset runs it at once',
    ownScope(async ({ expect }) => {
      const dir = tempDir();
      const agents = agentBin(dir);
      const db = join(dir, 'daemon', 'runledger.db');
      const port = await freePort();
      const start = async () => {
        const daemon = await startBoard(db, {
          command: 'daemon',
          port,
          args: ['--exec', 'claude', '--heartbeat-s', '1'],
          env: { ...agents.env, STANDIN_LIMIT_RESET_S: '2' },
        });
        await daemon.process.waitForOutput(/push stream connected/);
        return daemon;
      };
      const first = await start();
      const limited = await submitAs(first, 'talk', 'USAGE_LIMIT hello', 'alice');
      const until = Number((await waitingFor(db, limited)).data.notBefore);
      expect(await first.process.stop('SIGTERM')).toMatchObject({ code: 0 });
      expect(Date.now()).toBeLessThan(until);
      // Its reset passes while no daemon runs (a wait the next life re-arms is pinned in earlyTimers.test.ts).
      await waitFor('its reset to pass', () => Date.now() >= until);

      const second = await start();
      const answered = await waitForTerminal(second.url, limited);
      expect(answered, second.process.describe()).toMatchObject({ state: 'succeeded', reply: 'turn 1 (claude-sonnet-4-5): USAGE_LIMIT hello' });
      const log = readLog(db);
      expect(eventsOf(log, 'run.process.began', limited)).toHaveLength(2);
      expect(eventsOf(log, 'run.process.began', limited)[1]!.at).toBeGreaterThanOrEqual(until);
      expect(eventsOf(log, 'run.found.interrupted', limited)).toHaveLength(0);
      // The second life's queue gave it its slot as it started, before its runs were up: the start told the run.
      const [, secondLife] = eventsOf(log, 'computer.started');
      expect(eventsOf(log, 'run.limit.resumed', limited)[0]!.seq).toBeGreaterThan(secondLife!.seq);
      await second.process.stop();
      await checkLogs([db]);
    }),
  );
});
