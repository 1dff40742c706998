/**
 * Memory flat in runs handled (issue 16): the embedded daemon runs a warm-up of runs of a no-op agent,
 * then many more; RSS, heap and live handles after the warm-up (after a GC) against after the rest.
 * Target: RSS grows by at most 25 MB over the 3,000 runs after the first 500.
 *
 *   node --expose-gc --import tsx bench/memoryFlat.ts [--quick]
 */

import { startEmbedded } from './embeddedLoad.ts';
import { type Benchmark, gc, type Row, runIfMain } from './harness.ts';

const MB = 1024 * 1024;
const TARGET_MB = 25;

export interface MemoryFigures {
  readonly warmUp: number;
  readonly more: number;
  readonly rssMb: readonly [number, number];
  readonly heapMb: readonly [number, number];
  readonly handles: readonly [number, number];
  readonly runsPerS: number;
}

async function settle(): Promise<{ rss: number; heap: number; handles: number }> {
  // Finalisers and the allocator's own buffers settle over a few collections.
  for (let i = 0; i < 4; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const m = process.memoryUsage();
  return { rss: m.rss / MB, heap: m.heapUsed / MB, handles: process.getActiveResourcesInfo().length };
}

export async function measureMemory(options: { quick?: boolean } = {}, log: (line: string) => void = () => {}): Promise<MemoryFigures> {
  const warmUp = options.quick ? 200 : 500;
  const more = options.quick ? 1_000 : 3_000;
  const embedded = await startEmbedded('memory');
  try {
    await embedded.load(warmUp);
    const before = await settle();
    log(`after ${warmUp} runs: RSS ${before.rss.toFixed(1)} MB, heap ${before.heap.toFixed(1)} MB, ${before.handles} handles`);
    const seconds = await embedded.load(more);
    const after = await settle();
    log(
      `after ${more} more: RSS ${after.rss.toFixed(1)} MB, heap ${after.heap.toFixed(1)} MB, ${after.handles} handles (${(more / seconds).toFixed(0)} runs/s)`,
    );
    return {
      warmUp,
      more,
      rssMb: [before.rss, after.rss],
      heapMb: [before.heap, after.heap],
      handles: [before.handles, after.handles],
      runsPerS: more / seconds,
    };
  } finally {
    await embedded.close();
  }
}

export async function runMemoryBench(options: { quick?: boolean } = {}, log?: (line: string) => void): Promise<Row[]> {
  const f = await measureMemory(options, log);
  const rssGrowth = f.rssMb[1] - f.rssMb[0];
  const heapGrowth = f.heapMb[1] - f.heapMb[0];
  return [
    {
      benchmark: `memory: embedded daemon in this process, one life, --sync full: ${f.more} runs after ${f.warmUp}`,
      subject: `RSS +${rssGrowth.toFixed(1)} MB`,
      baseline: `RSS ${f.rssMb[0].toFixed(0)} MB after ${f.warmUp}`,
      ratio: `heap +${heapGrowth.toFixed(1)} MB`,
      target: `≤ +${TARGET_MB} MB`,
      pass: rssGrowth <= TARGET_MB,
      note: `heap ${f.heapMb[0].toFixed(1)} → ${f.heapMb[1].toFixed(1)} MB, live handles ${f.handles[0]} → ${f.handles[1]}, ${f.runsPerS.toFixed(0)} runs/s (no-op agent, 8 slots, 40 lanes)`,
    },
  ];
}

export const memoryFlat: Benchmark = {
  name: 'memoryFlat',
  run: (options) => runMemoryBench({ quick: options.quick }, (line) => process.stderr.write(`  [memoryFlat] ${line}\n`)),
};

runIfMain(import.meta.url, async (argv) => {
  const rows = await runMemoryBench({ quick: argv.includes('--quick') }, (line) => process.stderr.write(`  ${line}\n`));
  for (const row of rows)
    console.log(`${row.pass ? 'PASS' : 'FAIL'}  ${row.benchmark}: ${row.subject}, ${row.baseline}, ${row.ratio}\n      ${row.note}`);
  return rows.every((r) => r.pass) ? 0 : 1;
});
