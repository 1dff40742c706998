import { describe, expect, it } from 'vitest';
import type { AgentLauncher, Launched, LaunchListener, LaunchRequest } from '../../../adapters/agent/launcher.ts';
import { plainReader } from '../../../adapters/agent/outputReaders.ts';
import { FakeClock } from '../../../runtime/actors/clock.ts';
import { bounded, start } from './agents.ts';

/**
 * A launcher whose agent is over before `launch` resolves: the launcher's IPC messages (spawned, exit,
 * close) can arrive in one read, and node hands them on before the promise's continuation runs.
 */
function instantLauncher(): AgentLauncher {
  let pid = 4_000_000;
  return {
    launch(_request: LaunchRequest, listener: LaunchListener): Promise<Launched> {
      const launched = { pid: ++pid, id: pid, startTicks: 0 };
      listener.stdout('done');
      listener.exit(0, null);
      listener.close();
      return Promise.resolve(launched);
    },
    closeOutput() {},
  } as unknown as AgentLauncher;
}

describe('a finished fast agent leaves no live timer behind', () => {
  it('given an agent over before its launch was answered, then its budget timer is never armed (it would hold its buffers for the whole budget)', async () => {
    const clock = new FakeClock();
    for (let i = 0; i < 20; i++) {
      const agent = await start({
        command: 'true',
        prompt: 'hi',
        reader: plainReader(),
        clock,
        deadlineAt: clock.now() + 2 * 3_600_000,
        launcher: instantLauncher(),
      });
      expect((await agent.result).outcome).toBe('exited');
    }
    expect(clock.pendingTimers()).toBe(0);
  });

  it('given real fast agents through the shared launcher, then after each one ended no timer of it is pending', async () => {
    const clock = new FakeClock();
    for (let i = 0; i < 10; i++) {
      const agent = await start({ command: 'echo ok', prompt: '', reader: plainReader(), clock, deadlineAt: clock.now() + 3_600_000 });
      const result = await bounded(agent.result, 10_000, 'the agent did not finish');
      expect(result.reply).toMatchObject({ ok: true, text: 'ok' });
    }
    expect(clock.pendingTimers()).toBe(0);
  });
});
