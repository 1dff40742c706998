/**
 * Real agents as users type them (docs/rules.md#computer-behaviour, "Execution"), through a real daemon: `--exec claude`,
 * `claude -p --model X`, `codex` and `codex exec --skip-git-repo-check`, each run by stand-ins that
 * behave as the CLIs do (a terminal UI fails on a pipe, print mode refuses stream-json without
 * --verbose, real event shapes), named `claude` and `codex` first on PATH. The reply posted is the
 * answer, the next turn resumes, a refused resume is retried fresh, and the agent's own failure
 * verdict fails the turn with its words.
 */

import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type ExecutionReason, wordExecutionReason } from '../../events/executionReasons.ts';
import { agentBin } from '../fixtures/agents/bin.ts';
import { tempDir } from '../support/tempStore.ts';
import { eventsOf, readLog, startBoard, submit, waitForTerminal } from './support/cluster.ts';

const cases = [
  { exec: 'claude', agent: 'claude', model: 'claude-sonnet-4-5', failing: 'IS_ERROR', said: 'Credit balance is too low' },
  { exec: 'claude -p --model opus-x', agent: 'claude', model: 'opus-x', failing: 'MAX_TURNS', said: 'error_max_turns' },
  { exec: 'codex', agent: 'codex', model: 'gpt-5-codex', failing: 'TURN_FAILED', said: 'stream disconnected before completion' },
  {
    exec: 'codex exec --skip-git-repo-check',
    agent: 'codex',
    model: 'gpt-5-codex',
    failing: 'TURN_FAILED',
    said: 'stream disconnected before completion',
  },
] as const;

describe('real agents, as typed', () => {
  it.each(cases)(
    '--exec $exec: answers, resumes, retries a refused resume fresh, and fails with the agent’s words',
    async ({ exec, agent, model, failing, said }) => {
      const dir = tempDir();
      const agents = agentBin(dir);
      const db = join(dir, 'daemon', 'runledger.db');
      const daemon = await startBoard(db, { command: 'daemon', args: ['--exec', exec, '--heartbeat-s', '1'], env: agents.env });
      await daemon.process.waitForOutput(/push stream connected/);
      const turn = async (prompt: string) => waitForTerminal(daemon.url, await submit(daemon, 'talk', prompt));

      const first = await turn('hello');
      expect(first, daemon.process.describe()).toMatchObject({ state: 'succeeded', reply: `turn 1 (${model}): hello` });
      // What the turn cost, as the agent's terminal event said, on GET /v1/runs/{id} (docs/rules.md#wire-and-cli usage).
      expect((first as { usage?: unknown }).usage).toEqual(
        agent === 'claude'
          ? { cost_usd: 0.0123, input_tokens: 12, output_tokens: 7, cached_input_tokens: 3000 }
          : { input_tokens: 1200, output_tokens: 345, cached_input_tokens: 200 },
      );
      expect(await turn('and then?')).toMatchObject({ state: 'succeeded', reply: `turn 2 (${model}): and then?` });

      // The agent lost its sessions: the resume is refused, and the same run answers fresh.
      rmSync(join(agents.home, agent), { recursive: true, force: true });
      const fresh = await turn('still there?');
      expect(fresh).toMatchObject({ state: 'succeeded', reply: `turn 1 (${model}): still there?` });
      expect(await turn('good')).toMatchObject({ state: 'succeeded', reply: `turn 2 (${model}): good` });

      const failed = await turn(`please ${failing}`);
      expect(failed.state).toBe('failed');
      expect(failed.error).toContain(said);

      const log = readLog(db);
      const refused = eventsOf(log, 'lane.session.forgotten').filter(
        (e) => wordExecutionReason(e.data.reason as ExecutionReason) === 'the agent refused to resume it',
      );
      expect(refused).toHaveLength(1);
      const exits = eventsOf(log, 'run.process.exited', first.run_id);
      expect(exits[0]?.data.usage).toMatchObject({ inputTokens: agent === 'claude' ? 12 : 1200 });
    },
  );
});
