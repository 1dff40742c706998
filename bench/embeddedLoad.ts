/**
 * The embedded daemon (`runledger daemon`: board and computer in one process) under a steady load of a
 * no-op agent, driven in this very process so its heap, RSS and handles can be read: runs submitted
 * over HTTP with the submit token, a few at a time over a few lanes, until each is terminal. Shared by
 * the memory bench (memory after N runs against after M) and the throughput bench.
 */
import { readFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { join } from 'node:path';
import { type Daemon, startDaemon } from '../apps/daemon/startDaemon.ts';
import { benchDir } from './harness.ts';
import { callWith } from './httpCall.ts';

const TERMINAL = ['succeeded', 'failed', 'cancelled', 'resolved'] as const;
export const call = callWith(new Agent({ keepAlive: true, maxSockets: 64 }));

export interface EmbeddedDaemon {
  readonly daemon: Daemon;
  readonly url: string;
  readonly db: string;
  /** Submits `runs` runs over `lanes` lanes, `concurrency` at a time, and waits until all are terminal; seconds from first submit to last end. */
  load(runs: number, options?: { lanes?: number; concurrency?: number }): Promise<number>;
  close(): Promise<void>;
}

export async function startEmbedded(
  label: string,
  options: { exec?: string; slots?: number; sync?: 'full' | 'normal' } = {},
): Promise<EmbeddedDaemon> {
  const dir = join(benchDir(), `${label}-${process.hrtime.bigint()}`);
  const db = join(dir, 'runledger.db');
  const daemon = await startDaemon({
    db,
    port: 0,
    exec: options.exec ?? 'true',
    slots: options.slots ?? 8,
    ...(options.sync ? { sync: options.sync } : {}),
    budgetNote: false,
  });
  const url = daemon.url!;
  const token = readFileSync(join(dir, 'token'), 'utf8').trim();
  return {
    daemon,
    url,
    db,
    load: loadDriver(url, token),
    async close() {
      await daemon.close();
    },
  };
}

/**
 * The load itself, against a board at `url` with its submit token: in this process (the benches) or
 * in another (the profile, so that its samples are the daemon's alone). Each call submits `runs` more.
 */
export function loadDriver(url: string, token: string): EmbeddedDaemon['load'] {
  let submitted = 0;
  const ended = async () => {
    const { text } = await call(`${url}/metrics`, 'GET');
    let n = 0;
    for (const m of text.matchAll(/^runledger_runs\{state="(\w+)"\} (\d+)$/gm))
      if ((TERMINAL as readonly string[]).includes(m[1]!)) n += Number(m[2]);
    return n;
  };
  // Runs a board ended before this driver's first (a log of earlier lives) are not this load's.
  let before: number | null = null;
  return async (runs, { lanes = 40, concurrency = 16 } = {}) => {
    before ??= await ended();
    const target = before + submitted + runs;
    const started = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < runs) {
          const i = submitted + next++;
          const r = await call(
            `${url}/v1/runs`,
            'POST',
            { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            JSON.stringify({ lane: `lane-${i % lanes}`, prompt: `run ${i}` }),
          );
          if (r.status !== 201) throw new Error(`submit ${i} answered ${r.status}: ${r.text}`);
        }
      }),
    );
    submitted += runs;
    const deadline = Date.now() + Math.max(60_000, runs * 200);
    for (;;) {
      if ((await ended()) >= target) break;
      if (Date.now() > deadline) throw new Error(`only ${(await ended()) - before} of ${target - before} runs ended in time`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return (performance.now() - started) / 1000;
  };
}
