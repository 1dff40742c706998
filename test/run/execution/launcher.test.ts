import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { startAgent } from '../../../adapters/agent/agentProcess.ts';
import { AgentLauncher, launcherMessage } from '../../../adapters/agent/launcher.ts';
import { plainReader } from '../../../adapters/agent/outputReaders.ts';
import { systemClock } from '../../../runtime/actors/clock.ts';
import { builtScript } from '../../support/builtScripts.ts';
import { agentCommand, bounded, repoRoot, running, until, watched } from './agents.ts';

const launchers: AgentLauncher[] = [];
afterEach(() => {
  for (const launcher of launchers.splice(0)) launcher.close();
});

function ownLauncher(): AgentLauncher {
  const launcher = new AgentLauncher();
  launchers.push(launcher);
  return launcher;
}

/** Peak resident memory of a process, from /proc. */
function peakRssMb(pid: number): number {
  const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) / 1024;
}

/** A process's group and session ids, from /proc (after "pid (comm) ": state, ppid, pgrp, session). */
function groupAndSession(pid: number): [number, number] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const [, , pgrp, session] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return [Number(pgrp), Number(session)];
}

describe('the agent launcher', () => {
  it("leads a session of its own, so a Ctrl-C to the daemon's process group does not reach it (nor its agents)", async () => {
    const launcher = ownLauncher();
    const agent = await startAgent({
      command: 'sleep 0.2',
      cwd: repoRoot,
      prompt: '',
      reader: plainReader(),
      clock: systemClock,
      deadlineAt: null,
      launcher,
    });
    expect(groupAndSession(launcher.pid!)).toEqual([launcher.pid, launcher.pid]);
    expect(groupAndSession(agent.pid!)).toEqual([agent.pid, agent.pid]);
    expect(groupAndSession(launcher.pid!)[0]).not.toBe(groupAndSession(process.pid)[0]);
    await bounded(agent.result, 10_000, 'the agent did not finish');
  });

  it('given agents started through it, then each gets its own process group, its prompt, its environment and its exit', async () => {
    const launcher = ownLauncher();
    const agents = await Promise.all(
      [1, 2, 3].map((n) =>
        startAgent({
          command: agentCommand('echo.sh', String(n)),
          cwd: repoRoot,
          prompt: `turn ${n}`,
          env: { RUNLEDGER_SESSION_ID: `session-${n}` },
          reader: plainReader(),
          clock: systemClock,
          deadlineAt: null,
          launcher,
        }),
      ),
    );
    expect(new Set(agents.map((a) => a.pid)).size).toBe(3);
    // The launcher forked them: none is a child of this process.
    expect(agents.every((a) => a.pid !== launcher.pid && a.pgid === a.pid)).toBe(true);
    const results = await Promise.all(agents.map((a) => bounded(a.result, 10_000, 'an agent did not finish')));
    expect(results.map((r) => [r.exitCode, r.reply.ok && r.reply.text])).toEqual([
      [1, 'reply to: turn 1 (session session-1)'],
      [2, 'reply to: turn 2 (session session-2)'],
      [3, 'reply to: turn 3 (session session-3)'],
    ]);
  });

  it('given an agent that exits at once, then its launch still tells when it started (read before the launcher reaped it)', async () => {
    const launcher = ownLauncher();
    const events: string[] = [];
    let closed!: () => void;
    const ended = new Promise<void>((resolve) => (closed = resolve));
    const launched = launcher.launch(
      { command: 'exit 0', cwd: repoRoot, prompt: '' },
      { stdout: () => {}, stderr: () => {}, exit: () => events.push('exit'), close: () => closed(), lost: (reason) => events.push(reason) },
    );
    const answer = await bounded(launched, 10_000, 'the launch was not answered');
    await bounded(ended, 10_000, 'the agent did not close');
    if ('error' in answer) throw new Error(answer.error);
    // Its start in clock ticks since boot: at or after this process's, at or before now.
    const ownStart = Number(readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ')[19]);
    expect(answer.startTicks).toBeGreaterThanOrEqual(ownStart);
    expect(events).toEqual(['exit']);
  });

  it("given the daemon's NODE_OPTIONS, then agents get them and the launcher itself runs without them; an overlay can remove a variable", async () => {
    const before = process.env.NODE_OPTIONS;
    process.env.NODE_OPTIONS = '--max-old-space-size=123';
    process.env.RUNLEDGER_TEST_DROPPED = 'inherited';
    try {
      const launcher = ownLauncher();
      const agent = await startAgent({
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell's ${VAR-default}, for the shell to expand
        command: 'printf "%s|%s" "$NODE_OPTIONS" "${RUNLEDGER_TEST_DROPPED-removed}"',
        cwd: repoRoot,
        prompt: '',
        env: { RUNLEDGER_TEST_DROPPED: undefined },
        reader: plainReader(),
        clock: systemClock,
        deadlineAt: null,
        launcher,
      });
      const result = await bounded(agent.result, 10_000, 'the agent did not finish');
      expect(result.reply).toMatchObject({ ok: true, text: '--max-old-space-size=123|removed' });
      const launcherEnv = readFileSync(`/proc/${launcher.pid}/environ`, 'utf8').split('\0');
      expect(launcherEnv.some((entry) => entry.startsWith('NODE_OPTIONS='))).toBe(false);
    } finally {
      delete process.env.RUNLEDGER_TEST_DROPPED;
      if (before === undefined) delete process.env.NODE_OPTIONS;
      else process.env.NODE_OPTIONS = before;
    }
  });

  it('given the launcher killed while an agent runs, then that agent is stopped and reported killed, and the next one starts', async () => {
    const launcher = ownLauncher();
    const reader = watched(plainReader());
    const agent = await startAgent({
      command: agentCommand('hang.mjs', 'plain'),
      cwd: repoRoot,
      prompt: '',
      reader,
      clock: systemClock,
      deadlineAt: null,
      launcher,
    });
    await reader.printed('first half');
    process.kill(launcher.pid!, 'SIGKILL');
    const result = await bounded(agent.result, 10_000, 'the agent was never reported');
    expect(result.outcome).toBe('killed');
    expect(result.stderrTail).toMatch(/the agent launcher \(pid \d+\) ended \(SIGKILL\)/);
    expect(result.tail).toContain('first half');
    // Nobody could hear it any more: it does not run on.
    await until(() => !running(agent.pid!), 5_000, 'the unheard agent still runs');

    const next = await startAgent({
      command: 'echo again',
      cwd: repoRoot,
      prompt: '',
      reader: plainReader(),
      clock: systemClock,
      deadlineAt: null,
      launcher,
    });
    expect((await bounded(next.result, 10_000, 'the next agent did not finish')).reply).toMatchObject({ ok: true, text: 'again' });
  });

  it('given an agent that floods its output, then the launcher relays it with bounded memory of its own', async () => {
    const launcher = ownLauncher();
    const agent = await startAgent({
      command: agentCommand('flood.mjs', 'plain', '200'),
      cwd: repoRoot,
      prompt: '',
      reader: plainReader(),
      clock: systemClock,
      deadlineAt: null,
      launcher,
    });
    const launcherPid = launcher.pid!;
    const result = await bounded(agent.result, 25_000, 'the flood did not end');
    expect(result.exitCode).toBe(0);
    // A bare Node is ~50 MB; the 200 MB went through, paused while the channel was full, not piled up.
    expect(peakRssMb(launcherPid)).toBeLessThan(160);
  });

  it('given its daemon SIGKILLed, then the launcher ends too, and the agent is left to the restart as before', async () => {
    const script = `
      import { startAgent } from ${JSON.stringify(builtScript('adapters/agent/agentProcess.ts'))};
      import { sharedLauncher } from ${JSON.stringify(builtScript('adapters/agent/launcher.ts'))};
      import { plainReader } from ${JSON.stringify(builtScript('adapters/agent/outputReaders.ts'))};
      import { systemClock } from ${JSON.stringify(builtScript('runtime/actors/clock.ts'))};
      const agent = await startAgent({ command: 'sleep 30', cwd: '.', prompt: '', reader: plainReader(), clock: systemClock, deadlineAt: null });
      console.log(JSON.stringify({ launcher: sharedLauncher().pid, agent: agent.pid }));
    `;
    const daemon = spawn(process.execPath, ['--input-type=module', '-e', script], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const pids = await bounded(
      new Promise<{ launcher: number; agent: number }>((resolve) =>
        daemon.stdout.setEncoding('utf8').once('data', (line: string) => resolve(JSON.parse(line))),
      ),
      20_000,
      'the daemon never started its agent',
    );
    onTestFinished(() => {
      try {
        process.kill(-pids.agent, 'SIGKILL');
      } catch {
        // Gone already.
      }
    });
    daemon.kill('SIGKILL');
    await until(() => !running(pids.launcher), 5_000, 'the launcher outlived its daemon');
    expect(running(pids.agent)).toBe(true);
  });

  it('given a daemon whose agents have all ended, then the idle launcher does not keep it running', () => {
    const script = `
      import { startAgent } from ${JSON.stringify(builtScript('adapters/agent/agentProcess.ts'))};
      import { plainReader } from ${JSON.stringify(builtScript('adapters/agent/outputReaders.ts'))};
      import { systemClock } from ${JSON.stringify(builtScript('runtime/actors/clock.ts'))};
      const agent = await startAgent({ command: 'echo done', cwd: '.', prompt: '', reader: plainReader(), clock: systemClock, deadlineAt: null });
      const result = await agent.result;
      console.log(result.reply.text);
    `;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: repoRoot,
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(child.error).toBeUndefined();
    expect(child.stdout.trim()).toBe('done');
    expect(child.status).toBe(0);
  });
});

describe("the launcher's messages", () => {
  it('given each kind well formed, then it is taken; given a wrong field or kind, then it is not', () => {
    const good = [
      { id: 1, kind: 'spawned', pid: 4242 },
      { id: 1, kind: 'spawned', pid: 4242, startTicks: 123456 },
      { id: 1, kind: 'failed', message: 'spawn /bin/sh ENOENT' },
      { id: 1, kind: 'stdout', data: 'half of the answer' },
      { id: 1, kind: 'stderr', data: '' },
      { id: 1, kind: 'exit', code: 0, signal: null },
      { id: 1, kind: 'exit', code: null, signal: 'SIGKILL' },
      { id: 1, kind: 'close' },
    ];
    for (const message of good) expect(launcherMessage(message)).toEqual(message);
    const bad = [
      null,
      'close',
      { kind: 'close' },
      { id: '1', kind: 'close' },
      { id: 1, kind: 'spawned', pid: 0 },
      { id: 1, kind: 'spawned', pid: 1.5 },
      { id: 1, kind: 'spawned', pid: 4242, startTicks: -1 },
      { id: 1, kind: 'spawned', pid: 4242, startTicks: '5' },
      { id: 1, kind: 'stdout', data: Buffer.from('x') },
      { id: 1, kind: 'exit', code: '0', signal: null },
      { id: 1, kind: 'exit', code: 0, signal: 9 },
      { id: 1, kind: 'exploded' },
    ];
    for (const message of bad) expect(launcherMessage(message)).toBeNull();
  });
});
