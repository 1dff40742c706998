/**
 * What an agent leaves behind (issue 31): at a run's end everything its agent started is gone, the
 * process group and what escaped it (a session of its own), and the result says what had to be
 * killed (docs/rules.md#computer-behaviour, "Execution").
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { AgentLauncher, Launched, LaunchListener, LaunchRequest } from '../../../adapters/agent/launcher.ts';
import { plainReader } from '../../../adapters/agent/outputReaders.ts';
import { systemClock } from '../../../runtime/actors/clock.ts';
import { isProcessAlive } from '../../../runtime/actors/processes.ts';
import { tempDir } from '../../support/tempStore.ts';
import { agentCommand, bounded, start } from './agents.ts';

function leftBehind(file: string): number[] {
  if (!existsSync(file)) return [];
  const pids = readFileSync(file, 'utf8').trim().split(' ').map(Number);
  onTestFinished(() => {
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone, as it should be.
      }
    }
  });
  return pids;
}

/** The strays fixture started as a turn: a short grace and drain, so what it left is stopped at once. */
function startStrays(command: string, more: Partial<Parameters<typeof start>[0]> = {}) {
  return start({ command, prompt: 'go', reader: plainReader(), clock: systemClock, deadlineAt: null, killGraceMs: 300, drainMs: 300, ...more });
}

describe('an agent that leaves processes behind', () => {
  it('given a child holding its stdout open and a setsid grandchild ignoring SIGTERM, then both are gone when the result is known, and the result names them', async () => {
    const pidFile = join(tempDir(), 'pids');
    const agent = await startStrays(agentCommand('strays.mjs', pidFile));
    const result = await bounded(agent.result, 10_000, 'the agent did not finish');
    const [child, escapee] = leftBehind(pidFile) as [number, number];

    expect(result).toMatchObject({ outcome: 'exited', exitCode: 0, reply: { ok: true, text: 'ok' } });
    expect(isProcessAlive(child)).toBe(false);
    expect(isProcessAlive(escapee)).toBe(false);
    expect([...result.strays].sort((a, b) => a.pid - b.pid)).toEqual([child, escapee].sort((a, b) => a - b).map((pid) => ({ pid, command: 'node' })));
  });

  it('given an agent whose exit and close come in the same read as its launch (a busy daemon), then what it left is still found and stopped', async () => {
    const pidFile = join(tempDir(), 'pids');
    // The real launcher's three messages, as one read of its channel hands them over: the listener
    // hears the exit and the close before the launch's answer reaches the agent's handle.
    const sameRead = {
      launch(request: LaunchRequest, listener: LaunchListener): Promise<Launched> {
        const env = { ...process.env, ...request.env } as NodeJS.ProcessEnv;
        const shell = spawn('/bin/sh', ['-c', request.command], { cwd: request.cwd, env, detached: true, stdio: 'ignore' });
        return new Promise((resolve) => {
          shell.on('exit', (code, signal) => {
            listener.exit(code, signal);
            listener.close();
            resolve({ pid: shell.pid!, id: 1, startTicks: 0 });
          });
        });
      },
      closeOutput() {},
    } as unknown as AgentLauncher;
    const agent = await startStrays(`${agentCommand('strays.mjs', pidFile)} >/dev/null`, { launcher: sameRead });
    const result = await bounded(agent.result, 10_000, 'the agent did not finish');
    const [child, escapee] = leftBehind(pidFile) as [number, number];

    expect(isProcessAlive(child)).toBe(false);
    expect(isProcessAlive(escapee)).toBe(false);
    expect(result.strays.map((s) => s.pid).sort((a, b) => a - b)).toEqual([child, escapee].sort((a, b) => a - b));
  });

  it('given an agent that leaves nothing behind, then its result names no stray', async () => {
    const agent = await start({ command: agentCommand('echo.sh'), prompt: 'hi', reader: plainReader(), clock: systemClock, deadlineAt: null });
    expect((await bounded(agent.result, 10_000, 'the agent did not finish')).strays).toEqual([]);
  });
});
