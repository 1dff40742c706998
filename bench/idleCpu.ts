/**
 * An idle daemon sleeps (issue 25): the embedded daemon as a user starts it (`runledger daemon --exec
 * cat`, the board's default `--sync full`), one run done so every part has woken once, then left alone.
 * Measures the CPU it and its processes (the agent launcher) spend over a window (60 s; 15 s with
 * --quick), from /proc (each thread's run time in ns), against an idle Node process (a timer and nothing else) over the same window:
 * the floor any Node program pays. One point, one life.
 *
 *   node --import tsx bench/idleCpu.ts [--quick]
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { killLife, spawnDaemon } from './daemonProcess.ts';
import { type Benchmark, benchDir, type Row, runIfMain } from './harness.ts';

/** Of one core, as a fraction: the goal for a daemon with nothing to do. */
const TARGET = 0.002;
/**
 * From the run's end to the window: V8 gives back the memory the run's work grew, with two or three full
 * collections some 8 s after the allocations stop (its memory reducer: ~100 ms of CPU once, measured).
 * That is the price of going idle, paid once a burst, not of idling: it is measured apart (`settling`).
 */
const SETTLE_MS = 15_000;
/**
 * Nanoseconds on a CPU of `pid` and of every process below it, from /proc: each thread's schedstat (its
 * run time, exact), rather than stat's utime and stime (10 ms ticks, charged to whoever runs when one
 * falls: a process that wakes for 0.1 ms a time is charged a whole tick now and then, or never).
 */
function treeCpuNs(pid: number): number {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const text = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The command may hold spaces and parentheses: the fields start after its last ')'.
      parents.set(Number(entry), Number(text.slice(text.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // Gone between the listing and the read.
    }
  }
  let total = 0;
  const below = [pid];
  while (below.length > 0) {
    const at = below.pop()!;
    total += processCpuNs(at);
    for (const [child, parent] of parents) if (parent === at) below.push(child);
  }
  return total;
}

/** The run time of every thread of `pid`, in ns (0 once it is gone). */
function processCpuNs(pid: number): number {
  let ns = 0;
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
  } catch {
    // Gone meanwhile.
  }
  return ns;
}

export async function runIdleCpuBench(options: { quick?: boolean } = {}, log?: (line: string) => void): Promise<Row[]> {
  const windowMs = options.quick ? 15_000 : 60_000;
  const dir = join(benchDir(), 'idle');
  mkdirSync(dir, { recursive: true });
  const db = join(dir, 'runledger.db');
  const life = await spawnDaemon(db, ['--exec', 'cat', '--budget-note', 'off']);
  const floor = spawn(process.execPath, ['-e', 'setInterval(() => {}, 2 ** 30)'], { stdio: 'ignore' });
  try {
    const settleFrom = treeCpuNs(life.child.pid!);
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const daemonFrom = treeCpuNs(life.child.pid!);
    const settling = (daemonFrom - settleFrom) / 1e6;
    const floorFrom = treeCpuNs(floor.pid!);
    await new Promise((resolve) => setTimeout(resolve, windowMs));
    const daemon = (treeCpuNs(life.child.pid!) - daemonFrom) / 1e6 / windowMs;
    const bare = (treeCpuNs(floor.pid!) - floorFrom) / 1e6 / windowMs;
    log?.(
      `daemon ${(daemon * 100).toFixed(3)}% of a core, an idle node ${(bare * 100).toFixed(3)}%, over ${windowMs / 1000} s; ${settling.toFixed(0)} ms in the ${SETTLE_MS / 1000} s after its run`,
    );
    return [
      {
        benchmark: `idle daemon: its CPU over ${windowMs / 1000} s with nothing to do (daemon --exec cat, --sync full, after one run)`,
        subject: `${(daemon * 100).toFixed(3)}% of a core`,
        baseline: `${(bare * 100).toFixed(3)}% (an idle node)`,
        // Against the goal, not the floor: the floor is often 0 ticks, and no ratio to it says anything.
        ratio: (daemon / TARGET).toFixed(2),
        target: `≤ ${TARGET * 100}% of a core (ratio ≤ 1)`,
        pass: daemon <= TARGET,
        note: `its process and the agent launcher below it, every thread, from /proc/*/task/*/schedstat (ns), from ${SETTLE_MS / 1000} s after its run (${settling.toFixed(0)} ms of CPU in those, V8 giving back the run's memory); the ratio is to the goal`,
      },
    ];
  } finally {
    floor.kill('SIGKILL');
    await killLife(life);
  }
}

export const idleCpu: Benchmark = {
  name: 'idleCpu',
  run: (options) => runIdleCpuBench({ quick: options.quick }, (line) => process.stderr.write(`  [idleCpu] ${line}\n`)),
};

runIfMain(import.meta.url, async (argv) => {
  const rows = await runIdleCpuBench({ quick: argv.includes('--quick') }, (line) => process.stderr.write(`  ${line}\n`));
  for (const row of rows) console.log(`${row.pass ? 'PASS' : 'FAIL'}  ${row.benchmark}: ${row.subject}, ${row.baseline}\n      ${row.note}`);
  return rows.every((r) => r.pass) ? 0 : 1;
});
