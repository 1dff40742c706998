/**
 * A daemon's lives on one log, through the real CLI (docs/rules.md#computer-behaviour, "Incarnations" and "Shutdown"):
 * a daemon stopped by a signal and started again takes new work at once, and a Ctrl-C in its
 * terminal (SIGINT to its whole foreground process group) reaches the daemon only.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  agentFiles,
  eventsOf,
  MARKER_AGENT,
  markerCounts,
  readLog,
  repoRoot,
  startBoard,
  submit,
  waitFor,
  waitForTerminal,
} from '../e2e/support/cluster.ts';
import { tempDir } from '../support/tempStore.ts';

describe('a daemon stopped and started again on the same log', () => {
  it('a daemon stopped by SIGTERM takes new work in its next life', async () => {
    const dir = tempDir();
    const db = join(dir, 'runledger.db');
    const agent = agentFiles(dir);
    const start = async () => {
      const daemon = await startBoard(db, { command: 'daemon', args: ['--exec', MARKER_AGENT, '--heartbeat-s', '1'], env: agent.env });
      await daemon.process.waitForOutput(/push stream connected/);
      return daemon;
    };

    const first = await start();
    expect(await waitForTerminal(first.url, await submit(first, 'A', 'marker=one sleep=10'))).toMatchObject({ state: 'succeeded' });
    expect((await first.process.stop('SIGTERM')).code).toBe(0);

    const second = await start();
    const next = await submit(second, 'A', 'marker=two sleep=10');
    expect(await waitForTerminal(second.url, next, 10_000)).toMatchObject({ state: 'succeeded' });
    expect(markerCounts(agent.markers)).toEqual({ one: 1, two: 1 });
    const lives = eventsOf(readLog(db), 'computer.started');
    expect(lives).toHaveLength(2);
    expect(lives[0]!.data.incarnation).not.toBe(lives[1]!.data.incarnation);
    expect((await second.process.stop('SIGTERM')).code).toBe(0);
  });
});

describe("Ctrl-C in the daemon's terminal", () => {
  it('reaches the daemon only: a running turn gets its drain time, completes succeeded, and the daemon exits 0', async () => {
    const dir = tempDir();
    const db = join(dir, 'runledger.db');
    mkdirSync(dir, { recursive: true });
    const agent = agentFiles(dir);
    // Detached: the daemon leads a process group of its own, as a shell's foreground job does.
    const child = spawn(
      process.execPath,
      [join(repoRoot, 'cli/runledger.js'), 'daemon', '--db', db, '--port', '0', '--exec', MARKER_AGENT, '--drain-s', '30'],
      {
        cwd: repoRoot,
        env: { ...process.env, ...agent.env },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      },
    );
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal })),
    );
    onTestFinished(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // Gone already.
      }
    });
    await waitFor('the daemon to connect', () => /push stream connected/.test(out) || (child.exitCode !== null && Promise.reject(new Error(out))));
    const url = /board listening on (http:\/\/\S+)/.exec(out)![1]!;
    const board = { url, token: readFileSync(join(dir, 'token'), 'utf8').trim() };

    const runId = await submit(board, 'A', 'marker=turn sleep=3000');
    await waitFor('the turn to execute', () => markerCounts(agent.markers).turn === 1);
    process.kill(-child.pid!, 'SIGINT');

    const exit = await Promise.race([exited, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no exit:\n${out}`)), 20_000))]);
    expect(exit, out).toEqual({ code: 0, signal: null });
    const log = readLog(db);
    expect(eventsOf(log, 'run.process.exited', runId).map((e) => e.data.outcome)).toEqual(['exited']);
    expect(eventsOf(log, 'run.completion.requested', runId).map((e) => e.data.result)).toEqual([{ ok: true }]);
    expect(eventsOf(log, 'run.settled', runId).map((e) => e.data.reported)).toEqual([true]);
  });
});
