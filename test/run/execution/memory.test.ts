import { describe, expect, it } from 'vitest';
import { type AgentKind, type OutputReader, readerFor } from '../../../adapters/agent/outputReaders.ts';
import { systemClock } from '../../../runtime/actors/clock.ts';
import { agentCommand, bounded, start } from './agents.ts';

const MiB = 1024 * 1024;
const LIMIT = 64 * MiB;

interface Peak {
  rss: number;
  heapUsed: number;
  external: number;
}

/** Samples this process's memory on every chunk the reader is fed (the busy moments) and on a timer. */
function sampling(reader: OutputReader): { reader: OutputReader; growth: () => Peak; stop: () => void } {
  const base = process.memoryUsage();
  const peak: Peak = { rss: 0, heapUsed: 0, external: 0 };
  const sample = (): void => {
    const now = process.memoryUsage();
    peak.rss = Math.max(peak.rss, now.rss - base.rss);
    peak.heapUsed = Math.max(peak.heapUsed, now.heapUsed - base.heapUsed);
    peak.external = Math.max(peak.external, now.external + now.arrayBuffers - base.external - base.arrayBuffers);
  };
  let chunks = 0;
  const timer = setInterval(sample, 5);
  const wrapped: OutputReader = {
    ...reader,
    push(chunk) {
      reader.push(chunk);
      if (++chunks % 16 === 0) sample();
    },
  };
  return {
    reader: wrapped,
    growth: () => {
      sample();
      return { ...peak };
    },
    stop: () => clearInterval(timer),
  };
}

const mb = (bytes: number): string => `${(bytes / MiB).toFixed(1)} MB`;

async function flood(mode: string, megabytes: number, kind: AgentKind) {
  const probe = sampling(readerFor(kind));
  const startedAt = Date.now();
  try {
    const agent = await start({
      command: agentCommand('flood.mjs', mode, String(megabytes)),
      prompt: '',
      reader: probe.reader,
      clock: systemClock,
      deadlineAt: null,
    });
    const result = await bounded(agent.result, 25_000, `the ${megabytes} MB flood did not end`);
    const growth = probe.growth();
    console.log(
      `${megabytes} MB ${mode} through the ${kind} reader in ${Date.now() - startedAt} ms: peak growth rss ${mb(growth.rss)}, heapUsed ${mb(growth.heapUsed)}, external+arrayBuffers ${mb(growth.external)}`,
    );
    return { result, growth };
  } finally {
    probe.stop();
  }
}

describe('however much an agent prints, memory stays bounded', () => {
  it('given 200 MB of plain output, then the reply is capped at 1 MiB, the tail holds the end, and memory grows by under 64 MB', async () => {
    const { result, growth } = await flood('plain', 200, 'plain');
    expect(result.outcome).toBe('exited');
    expect(result.exitCode).toBe(0);
    expect(result.reply.ok).toBe(true);
    if (!result.reply.ok) return;
    expect(result.reply.truncated).toBe(true);
    expect(Buffer.byteLength(result.reply.text)).toBeLessThanOrEqual(MiB);
    expect(result.reply.text).toContain(`the agent wrote ${200 * MiB} bytes]`);
    expect(result.tail).toMatch(/^x+$/m);
    expect(growth.rss).toBeLessThan(LIMIT);
    expect(growth.heapUsed).toBeLessThan(LIMIT);
  });

  it('given 100 MB of Claude events with a 20 MiB line among them, then the long line is skipped, the result still arrives, and memory grows by under 64 MB', async () => {
    const { result, growth } = await flood('claude', 100, 'claude');
    expect(result.outcome).toBe('exited');
    expect(result.sessionId).toBe('flood-session');
    expect(result.reply).toEqual({ ok: true, text: 'flood done', truncated: false });
    expect(growth.rss).toBeLessThan(LIMIT);
    expect(growth.heapUsed).toBeLessThan(LIMIT);
  });

  it('given 100 MB without a single newline to a JSON reader, then nothing holds the line and memory grows by under 64 MB', async () => {
    const { result, growth } = await flood('oneline', 100, 'codex');
    expect(result.reply.ok).toBe(false);
    expect(result.reply.ok || result.reply.reason).toMatch(/over 8388608 characters were skipped/);
    expect(growth.rss).toBeLessThan(LIMIT);
    expect(growth.heapUsed).toBeLessThan(LIMIT);
  });
});
