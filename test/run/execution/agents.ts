import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { onTestFinished } from 'vitest';
import { shellQuote } from '../../../actors/run/resume.ts';
import { type AgentHandle, type StartAgentOptions, startAgent } from '../../../adapters/agent/agentProcess.ts';
import type { OutputReader } from '../../../adapters/agent/outputReaders.ts';
import { interpreterOf } from '../../fixtures/agents/interpreter.ts';

export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

/** The command line that runs a script of test/fixtures/agents/ (with sh or this very node: see interpreterOf). */
export function agentCommand(script: string, ...args: string[]): string {
  return [interpreterOf(script), `test/fixtures/agents/${script}`, ...args].map(shellQuote).join(' ');
}

/** Starts an agent in the repository; its whole group is SIGKILLed when the test ends, whatever happened. */
export async function start(options: Omit<StartAgentOptions, 'cwd'> & { cwd?: string }): Promise<AgentHandle> {
  const handle = await startAgent({ cwd: repoRoot, ...options });
  onTestFinished(() => {
    if (handle.pgid === null) return;
    try {
      process.kill(-handle.pgid, 'SIGKILL');
    } catch {
      // Already gone: what the test expected.
    }
  });
  return handle;
}

/**
 * A reader that lets a test wait for the agent to have printed something (the moment is an event
 * the test waits for, bounded, rather than a sleep).
 */
export function watched(reader: OutputReader): OutputReader & { printed(text: string, ms?: number): Promise<void> } {
  let seen = '';
  let waiters: { text: string; resolve: () => void }[] = [];
  return {
    kind: reader.kind,
    push(chunk) {
      reader.push(chunk);
      // Only the end matters for matching; bounded so a chatty agent costs nothing here.
      seen = (seen + (typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'))).slice(-4_096);
      const ready = waiters.filter((w) => seen.includes(w.text));
      waiters = waiters.filter((w) => !ready.includes(w));
      for (const w of ready) w.resolve();
    },
    end: () => reader.end(),
    onSessionId: (listener) => reader.onSessionId(listener),
    sessionId: () => reader.sessionId(),
    replySoFar: () => reader.replySoFar(),
    finalReply: () => reader.finalReply(),
    agentError: () => reader.agentError(),
    usage: () => reader.usage(),
    usageLimit: (context) => reader.usageLimit(context),
    progress: () => reader.progress(),
    onProgress: (listener) => reader.onProgress(listener),
    unfinishedTail: () => reader.unfinishedTail(),
    printed(text, ms = 10_000) {
      if (seen.includes(text)) return Promise.resolve();
      return bounded(new Promise<void>((resolve) => waiters.push({ text, resolve })), ms, `the agent never printed ${JSON.stringify(text)}`);
    },
  };
}

export function bounded<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} (waited ${ms} ms)`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/**
 * Whether a process is still running. A zombie counts as gone: it runs nothing, and in a container
 * whose first process does not reap orphans it may linger as one indefinitely.
 */
export function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Resolves once `check` holds, looking every 10 ms; fails after `ms`. */
export async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`${what} (waited ${ms} ms)`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
