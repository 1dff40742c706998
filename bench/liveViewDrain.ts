/**
 * A board's drain with a slow tab open on its board page (issue 31): a backlog of queued runs (5,000,
 * each on a lane of its own) drained by the embedded daemon (board and computer in this process, a
 * no-op agent, 8 slots), timed from the daemon's start to the last run's end, with no page open
 * against with one tab that reads its socket at 64 KB/s and reconnects as the page does (backoff.js).
 * The board once sent every tab the whole board every quarter second: such a tab was dropped, came
 * back at once, again and again, and halved the drain. Target: ≥ 0.95 of the drain without a tab.
 * The tab's first message (its hello, the board page's first view) is measured too: page-sized,
 * whatever the backlog. `--runs` sets the backlog; `--drain` times the drain of its first N runs only
 * (a loaded machine drains 50,000 no-op runs in over an hour; the page's cost grows with what is queued).
 *
 *   node --expose-gc --import tsx bench/liveViewDrain.ts [--quick] [--rounds N] [--runs N] [--drain N]
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { startDaemon } from '../apps/daemon/startDaemon.ts';
import { seedBacklog } from '../test/fixtures/backlog.ts';
import { failuresAfter, reconnectDelay } from '../web/static/backoff.js';
import { call } from './embeddedLoad.ts';
import { type Benchmark, benchDir, paired, progress, type Row, ratioRow, runIfMain } from './harness.ts';

const SLOTS = 8;
const TARGET = 0.95;
/** How fast the slow tab reads its socket. */
const SLOW_BYTES_PER_S = 64 * 1024;
const TERMINAL = /^runledger_runs\{state="(succeeded|failed|cancelled|resolved)"\} (\d+)$/gm;

/** What the slow tab went through during one drain. */
interface TabReport {
  opens: number;
  bytes: number;
  /** The largest first message of its sockets (each open's hello), in bytes. */
  firstMessage: number;
}

/**
 * A tab that reads `SLOW_BYTES_PER_S` of its socket and no more (a slow link, a busy machine), and,
 * dropped, opens it again after the page's own backoff.
 */
function slowTab(url: string, report: TabReport): () => void {
  let stopped = false;
  let failures = 0;
  let timer: NodeJS.Timeout | null = null;
  let current: WebSocket | null = null;
  const open = () => {
    if (stopped) return;
    report.opens++;
    const ws = new WebSocket(`${url.replace('http', 'ws')}/v1/live`, { headers: { origin: url } });
    current = ws;
    let openedAt: number | null = null;
    let allowance = 0;
    ws.once('message', (data: Buffer) => {
      report.firstMessage = Math.max(report.firstMessage, data.length);
    });
    const pacing = setInterval(() => {
      allowance = SLOW_BYTES_PER_S / 10;
      (ws as unknown as { _socket?: { resume(): void } })._socket?.resume();
    }, 100);
    ws.on('open', () => {
      openedAt = performance.now();
      const socket = (ws as unknown as { _socket: NodeJS.ReadableStream & { pause(): void } })._socket;
      socket.on('data', (chunk: Buffer) => {
        report.bytes += chunk.length;
        allowance -= chunk.length;
        if (allowance <= 0) socket.pause();
      });
    });
    ws.on('error', () => {
      // followed by its close
    });
    ws.on('close', () => {
      clearInterval(pacing);
      failures = failuresAfter(failures, { openedForMs: openedAt === null ? null : performance.now() - openedAt });
      if (!stopped) timer = setTimeout(open, reconnectDelay(failures));
    });
  };
  open();
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    current?.terminate();
  };
}

/** Runs/s of a drain of `runs` queued runs, up to the `drained`-th run's end, with or without the slow tab. */
async function drain(runs: number, drained: number, withTab: boolean, tab: TabReport): Promise<number> {
  const dir = join(benchDir(), `live-drain-${process.hrtime.bigint()}`);
  mkdirSync(dir, { recursive: true });
  const db = join(dir, 'runledger.db');
  await seedBacklog(db, runs);
  const started = performance.now();
  const daemon = await startDaemon({ db, port: 0, exec: 'true', slots: SLOTS, budgetNote: false });
  const stop = withTab ? slowTab(daemon.url!, tab) : () => {};
  try {
    // Generous: a loaded machine drains a tenth as fast; the bench measures a ratio, not a deadline.
    for (const deadline = Date.now() + Math.max(300_000, drained * 1_000); ; ) {
      const { text } = await call(`${daemon.url}/metrics`, 'GET');
      let ended = 0;
      for (const m of text.matchAll(TERMINAL)) ended += Number(m[2]);
      if (ended >= drained) break;
      if (Date.now() > deadline) throw new Error(`only ${ended} of ${drained} runs ended in time (${withTab ? 'with' : 'without'} the slow tab)`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return drained / ((performance.now() - started) / 1000);
  } finally {
    stop();
    await daemon.close();
  }
}

export async function runLiveViewDrainBench(
  options: { quick?: boolean; rounds?: number; runs?: number; drain?: number } = {},
  log?: (line: string) => void,
): Promise<Row[]> {
  const runs = options.runs ?? (options.quick ? 1_000 : 5_000);
  const drained = Math.min(runs, options.drain ?? runs);
  const tab: TabReport = { opens: 0, bytes: 0, firstMessage: 0 };
  const p = await paired(
    options.rounds ?? (options.quick ? 2 : 3),
    () => drain(runs, drained, true, tab),
    () => drain(runs, drained, false, tab),
    log,
  );
  const drains = p.subject.length;
  return [
    ratioRow(
      `drain of ${drained === runs ? 'a' : `the first ${drained} runs of a`} ${runs}-run backlog with a slow tab on the board page: runs/s vs no tab`,
      'runs/s',
      p,
      TARGET,
      `${runs} runs each on a lane of its own, ${SLOTS} slots, a no-op agent, timed from the daemon's start; the tab reads ${SLOW_BYTES_PER_S / 1024} KB/s ` +
        `and opened its socket ${(tab.opens / drains).toFixed(1)} times a drain, receiving ${(tab.bytes / drains / 1024).toFixed(0)} KB; ` +
        `its first message at most ${(tab.firstMessage / 1024).toFixed(1)} KB`,
    ),
  ];
}

export const liveViewDrain: Benchmark = {
  name: 'liveViewDrain',
  run: (options) => runLiveViewDrainBench({ quick: options.quick, rounds: options.rounds }, progress('liveViewDrain')),
};

runIfMain(import.meta.url, async (argv) => {
  const rows = await runLiveViewDrainBench(
    { quick: argv.includes('--quick'), rounds: flag(argv, '--rounds'), runs: flag(argv, '--runs'), drain: flag(argv, '--drain') },
    (line) => process.stderr.write(`  ${line}\n`),
  );
  for (const row of rows)
    console.log(`${row.pass ? 'PASS' : 'FAIL'}  ${row.benchmark}: ${row.subject} vs ${row.baseline}, ratio ${row.ratio}; ${row.note}`);
  return rows.every((r) => r.pass) ? 0 : 1;
});

/** A whole number given after `name` on the command line, or undefined; anything else is refused. */
function flag(argv: readonly string[], name: string): number | undefined {
  const at = argv.indexOf(name);
  if (at === -1) return undefined;
  const value = Number(argv[at + 1]);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} takes a whole number above 0 (got ${argv[at + 1] ?? 'nothing'})`);
  return value;
}
