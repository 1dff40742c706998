import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { codeOf } from '../../events/thrown.ts';

/**
 * What an agent left running after its turn (docs/rules.md#computer-behaviour, "Execution"): a child
 * still holding its stdout, a server it started with `&`, a grandchild that moved to a session of its
 * own (`setsid`, a daemonising tool) and so left the agent's process group.
 *
 * How they are found. Linux offers no way for the daemon to stay their ancestor: a child subreaper
 * (`prctl(PR_SET_CHILD_SUBREAPER)`) is not reachable from Node, and a cgroup needs a writable, delegated
 * hierarchy that a daemon run by a user usually lacks. Walking the process tree at the end is too late
 * (an orphan's parent is init by then), and polling it misses a quick double fork. What every
 * descendant does keep, across fork, exec and setsid, is its environment: each agent is started with
 * a mark of its own in it (AGENT_MARK), and at its end every process of this user whose environment
 * (`/proc/<pid>/environ`) carries that mark is one it started, whatever group or session it is in.
 * Beside the mark, the agent's process group (a member that cleared its environment but stayed in the
 * group) and the descendants of both (their children by parent pid) are taken too. A process that both
 * cleared its environment and left the group escapes; that takes intent, not carelessness.
 * Where /proc cannot be read (not Linux), only the process group is stopped, as before.
 *
 * Only processes started since the agent can be its (all it started is younger than it), so a sweep
 * reads the `stat` of those alone: the start of every other is remembered from the last sweep, known
 * to be the same process either because no pid can have been used again since (see `noPidReused`), or
 * else by its /proc entry (a pid used again gets an entry of its own, a new inode). A `stat` of each
 * /proc entry costs a quarter of a read of its `stat` file: reading every process's, synchronously,
 * cost the daemon 2 to 4 ms of CPU a sweep on a machine of 90 processes, at each turn's end
 * (bench/profileEmbedded.ts: a third of its CPU), and through fs.promises ~9 ms; the `stat`s of the
 * entries, still ~0.3 ms a sweep on a machine of 200, are skipped while sweeps come often.
 */
export const AGENT_MARK = 'RUNLEDGER_AGENT_MARK';

/** A mark no other agent of any daemon carries: this process's pid, and random bytes. */
export function newAgentMark(): string {
  return `${process.pid}.${randomBytes(8).toString('hex')}`;
}

export interface Stray {
  readonly pid: number;
  /** Its program's name (`comm`), or null when it could not be read. */
  readonly command: string | null;
}

interface ProcessInfo {
  readonly pid: number;
  readonly ppid: number;
  readonly pgrp: number;
  readonly command: string;
  /** When it started, in clock ticks since boot (`/proc/<pid>/stat` field 22). */
  readonly startTicks: number;
}

/**
 * When the process `pid` started, in clock ticks since boot, or 0 when it cannot be read: taken as
 * the agent starts, so that at its end only processes started since are read for its mark.
 */
export function startTicksOf(pid: number | null): number {
  if (pid === null) return 0;
  return processInfo(pid)?.startTicks ?? 0;
}

/**
 * The live processes (zombies aside) started at `sinceTicks` or later that carry `mark`, are in the
 * group `pgid`, or descend from either; never this process. With `sinceTicks` 0 (the agent's start not
 * known: a run of an earlier life) every process is looked at.
 */
export function findStrays(mark: string, pgid: number | null, sinceTicks = 0): Stray[] {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  const needle = Buffer.from(`${AGENT_MARK}=${mark}\0`);
  const since = lastSweep;
  lastSweep = machineTasks();
  // Each pid read by the last sweep is taken for the same process only while no pid can have been given
  // again, from then until this sweep's reads are done: checked once more after them.
  const trusted = noPidReused(since, lastSweep);
  let young = youngProcesses(names, sinceTicks, trusted);
  if (trusted && !noPidReused(since, machineTasks())) young = youngProcesses(names, sinceTicks, false);
  const taken = new Set<number>();
  for (const info of young) if (info.pgrp === pgid || carries(info.pid, needle)) taken.add(info.pid);
  // Their descendants too (a child that cleared its environment in a session of its own), to a fixed point.
  for (let grew = true; grew; ) {
    grew = false;
    for (const info of young) {
      if (!taken.has(info.pid) && taken.has(info.ppid)) {
        taken.add(info.pid);
        grew = true;
      }
    }
  }
  return young.filter((info) => taken.has(info.pid)).map((info) => ({ pid: info.pid, command: info.command || null }));
}

/** The processes of the listing `names` started at `sinceTicks` or later (see startedSince); a pid no longer listed is forgotten. */
function youngProcesses(names: readonly string[], sinceTicks: number, unchanged: boolean): ProcessInfo[] {
  const listed = new Set<number>();
  const young: ProcessInfo[] = [];
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    listed.add(pid);
    if (pid === process.pid) continue;
    const info = startedSince(pid, sinceTicks, unchanged);
    if (info !== null) young.push(info);
  }
  for (const pid of starts.keys()) if (!listed.has(pid)) starts.delete(pid);
  return young;
}

/**
 * The start of each process a sweep read, with the identity of its /proc entry (inode, and its
 * change time: when the entry was made; inode 0 when it was not taken), so that a later sweep needs
 * at most a `stat` of the entry to know an old process for old. A pid no longer listed is forgotten.
 */
const starts = new Map<number, { readonly ino: number; readonly ctimeMs: number; readonly startTicks: number }>();

/**
 * The process `pid`, read afresh, if it started at `sinceTicks` or later (and is alive); null otherwise.
 * `unchanged`: no pid was used again since the last sweep, so one it read is the same process.
 */
function startedSince(pid: number, sinceTicks: number, unchanged: boolean): ProcessInfo | null {
  const known = starts.get(pid);
  if (unchanged) {
    if (known !== undefined && known.startTicks < sinceTicks) return null;
    const info = processInfo(pid);
    if (info === null) return null;
    // Its entry's identity not taken: a sweep after many new processes reads it again.
    starts.set(pid, { ino: 0, ctimeMs: 0, startTicks: info.startTicks });
    return info.startTicks >= sinceTicks ? info : null;
  }
  // The entry first, then the file: a pid used again in between is recorded under the older entry,
  // which the next sweep finds changed, and so reads again (the other order could skip a new process).
  const entry = entryOf(pid);
  if (entry === null) return null;
  if (known !== undefined && known.startTicks < sinceTicks && known.ino > 0 && known.ino === entry.ino && known.ctimeMs === entry.ctimeMs)
    return null;
  const info = processInfo(pid);
  if (info === null) return null;
  if (entry.ino > 0) starts.set(pid, { ino: entry.ino, ctimeMs: entry.ctimeMs, startTicks: info.startTicks });
  return info.startTicks >= sinceTicks ? info : null;
}

/** The machine's tasks: how many were ever made (forks and threads), how many are alive now. */
export interface MachineTasks {
  readonly forks: number;
  readonly alive: number;
  readonly pidMax: number;
}

/** The machine's tasks as of the last sweep's start (null before the first, or where /proc does not say). */
let lastSweep: MachineTasks | null = null;

function machineTasks(): MachineTasks | null {
  const forks = firstNumberAfter('/proc/stat', '\nprocesses ');
  // /proc/loadavg: "0.50 0.40 0.30 running/alive lastpid".
  const alive = firstNumberAfter('/proc/loadavg', '/');
  const pidMax = firstNumberAfter('/proc/sys/kernel/pid_max', '');
  return forks === null || alive === null || pidMax === null ? null : { forks, alive, pidMax };
}

/**
 * Whether no pid can have been given to a new process between `then` and `now`, so that a pid read at
 * `then` is still the process read. Linux hands pids out in turn, wrapping at `pid_max` back to 300
 * and skipping those in use (threads included): a pid comes again only once the turn went all the way
 * round, which takes at least (pid_max - 300 - tasks alive meanwhile) new tasks, and the tasks alive
 * meanwhile are at most those alive at the start plus the new ones. So fewer new tasks (/proc/stat's
 * `processes`: every fork and thread) than half of (pid_max - 300 - tasks alive) is proof enough.
 */
export function noPidReused(then: MachineTasks | null, now: MachineTasks | null): boolean {
  if (then === null || now === null) return false;
  const pidMax = Math.min(then.pidMax, now.pidMax);
  return now.forks - then.forks < (pidMax - 300 - Math.max(then.alive, now.alive)) / 2;
}

/** The number that follows `after` in the file at `path`, or null when it cannot be read. */
function firstNumberAfter(path: string, after: string): number | null {
  try {
    const text = readFileSync(path, 'latin1');
    const at = after === '' ? 0 : text.indexOf(after);
    if (at < 0) return null;
    const value = Number.parseInt(text.slice(at + after.length), 10);
    return Number.isSafeInteger(value) ? value : null;
  } catch {
    return null;
  }
}

/** The identity of `pid`'s /proc entry; null once it is gone; inode 0 when it could not be read (the process is read afresh). */
function entryOf(pid: number): { readonly ino: number; readonly ctimeMs: number } | null {
  try {
    return statSync(`/proc/${pid}`, { throwIfNoEntry: false }) ?? null;
  } catch {
    return { ino: 0, ctimeMs: 0 };
  }
}

/** How often the end of a stray is looked for, between its SIGTERM and its end. */
const STRAY_LOOK_MS = 50;
/**
 * How long a stray that had its SIGKILL is waited for: it ends once the kernel next runs it, which on a
 * loaded machine can take a moment after the signal; one that outlasts this (stuck in the kernel, an
 * uninterruptible wait) is left to the sweep of the next run's end.
 */
const KILLED_WAIT_MS = 2_000;

/**
 * Stops what an agent left running: SIGTERM, then SIGKILL to those still alive after the grace
 * (again to any that appears meanwhile), and resolves once they are gone, with those found. Real
 * time, not the injected clock: these are the machine's processes ending, and none is found for an
 * agent that left none.
 */
export async function stopStrays(mark: string, pgid: number | null, sinceTicks: number, graceMs: number): Promise<Stray[]> {
  if (pgid === null) return [];
  const found = findStrays(mark, pgid, sinceTicks);
  if (found.length === 0) return [];
  signalStrays(found, 'SIGTERM');
  const killAt = performance.now() + graceMs;
  const giveUpAt = killAt + KILLED_WAIT_MS;
  for (let left = found; left.length > 0 && performance.now() < giveUpAt; left = findStrays(mark, pgid, sinceTicks)) {
    if (performance.now() >= killAt) signalStrays(left, 'SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, STRAY_LOOK_MS));
  }
  return found;
}

/** Signals each stray; one already gone is no failure. */
export function signalStrays(strays: readonly Stray[], signal: NodeJS.Signals): void {
  for (const { pid } of strays) {
    try {
      process.kill(pid, signal);
    } catch (error) {
      // ESRCH: gone already; EPERM: another user's process now under that pid: none of ours.
      if (codeOf(error) !== 'ESRCH' && codeOf(error) !== 'EPERM') throw error;
    }
  }
}

function processInfo(pid: number): ProcessInfo | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) state ppid pgrp ...": comm may itself hold spaces and parentheses.
    const open = stat.indexOf('(');
    const close = stat.lastIndexOf(')');
    const fields = stat.slice(close + 2).split(' ');
    // From field 3 (state) on: state, ppid, pgrp, ..., starttime (field 22, so index 19 here).
    const [state, ppid, pgrp] = fields;
    if (state === 'Z' || state === 'X') return null;
    return { pid, ppid: Number(ppid), pgrp: Number(pgrp), command: stat.slice(open + 1, close), startTicks: Number(fields[19]) || 0 };
  } catch {
    // Ended between the listing and the read.
    return null;
  }
}

function carries(pid: number, needle: Buffer): boolean {
  try {
    // Each variable ends with a NUL; the first has none before it.
    const environ = readFileSync(`/proc/${pid}/environ`);
    return environ.indexOf(needle) === 0 || environ.indexOf(Buffer.concat([Buffer.from([0]), needle])) >= 0;
  } catch {
    // Another user's process (EACCES), or ended meanwhile: none of this agent's.
    return false;
  }
}
