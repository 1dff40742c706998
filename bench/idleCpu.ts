/**
 * An idle daemon sleeps (issue 25): the embedded daemon as a user starts it (`runledger daemon --exec
 * cat`, the board's default `--sync full`), one run done so every part has woken once, then left alone.
 * Measures the CPU it and its processes (the agent launcher) spend over a window (60 s; 15 s with
 * --quick), from /proc, against an idle Node process (a timer and nothing else) over the same window:
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
/** Linux's USER_HZ: /proc counts CPU in these ticks. */
const TICKS_PER_S = 100;
const SETTLE_MS = 5_000;

/** CPU ticks (user + system) of `pid` and of every process below it, as /proc has them now. */
function treeTicks(pid: number): number {
  const stats = new Map<number, { ppid: number; ticks: number }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const text = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The command may hold spaces and parentheses: the fields start after its last ')'.
      const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
      stats.set(Number(entry), { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) });
    } catch {
      // Gone between the listing and the read.
    }
  }
  let total = 0;
  const below = [pid];
  while (below.length > 0) {
    const at = below.pop()!;
    total += stats.get(at)?.ticks ?? 0;
    for (const [child, stat] of stats) if (stat.ppid === at) below.push(child);
  }
  return total;
}

export async function runIdleCpuBench(options: { quick?: boolean } = {}, log?: (line: string) => void): Promise<Row[]> {
  const windowMs = options.quick ? 15_000 : 60_000;
  const dir = join(benchDir(), 'idle');
  mkdirSync(dir, { recursive: true });
  const db = join(dir, 'runledger.db');
  const life = await spawnDaemon(db, ['--exec', 'cat', '--budget-note', 'off']);
  const floor = spawn(process.execPath, ['-e', 'setInterval(() => {}, 2 ** 30)'], { stdio: 'ignore' });
  try {
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const daemonFrom = treeTicks(life.child.pid!);
    const floorFrom = treeTicks(floor.pid!);
    await new Promise((resolve) => setTimeout(resolve, windowMs));
    const daemon = (treeTicks(life.child.pid!) - daemonFrom) / TICKS_PER_S / (windowMs / 1000);
    const bare = (treeTicks(floor.pid!) - floorFrom) / TICKS_PER_S / (windowMs / 1000);
    log?.(`daemon ${(daemon * 100).toFixed(3)}% of a core, an idle node ${(bare * 100).toFixed(3)}%, over ${windowMs / 1000} s`);
    return [
      {
        benchmark: `idle daemon: its CPU over ${windowMs / 1000} s with nothing to do (daemon --exec cat, --sync full, after one run)`,
        subject: `${(daemon * 100).toFixed(3)}% of a core`,
        baseline: `${(bare * 100).toFixed(3)}% (an idle node)`,
        // Against the goal, not the floor: the floor is often 0 ticks, and no ratio to it says anything.
        ratio: (daemon / TARGET).toFixed(2),
        target: `≤ ${TARGET * 100}% of a core (ratio ≤ 1)`,
        pass: daemon <= TARGET,
        note: 'its process and the agent launcher below it, from /proc (10 ms ticks), after 5 s to settle; the ratio is to the goal',
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
