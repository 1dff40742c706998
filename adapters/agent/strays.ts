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
 * reads the `stat` of those alone: the start of every other is remembered from an earlier sweep, known
 * to be the same process by its /proc entry (a pid used again gets an entry of its own, a new inode).
 * A `stat` of each /proc entry costs a quarter of a read of its `stat` file: reading every process's,
 * synchronously, cost the daemon 2 to 4 ms of CPU a sweep on a machine of 90 processes, at each
 * turn's end (bench/profileEmbedded.ts: a third of its CPU), and through fs.promises ~9 ms.
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
  const listed = new Set<number>();
  const young: ProcessInfo[] = [];
  const taken = new Set<number>();
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    listed.add(pid);
    if (pid === process.pid) continue;
    const info = startedSince(pid, sinceTicks);
    if (info === null) continue;
    young.push(info);
    if (info.pgrp === pgid || carries(info.pid, needle)) taken.add(info.pid);
  }
  for (const pid of starts.keys()) if (!listed.has(pid)) starts.delete(pid);
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

/**
 * The start of each process a sweep read, with the identity of its /proc entry (inode, and its
 * change time: when the entry was made), so that a later sweep needs only a `stat` of the entry to
 * know an old process for old. A pid no longer listed is forgotten.
 */
const starts = new Map<number, { readonly ino: number; readonly ctimeMs: number; readonly startTicks: number }>();

/** The process `pid`, read afresh, if it started at `sinceTicks` or later (and is alive); null otherwise. */
function startedSince(pid: number, sinceTicks: number): ProcessInfo | null {
  // The entry first, then the file: a pid used again in between is recorded under the older entry,
  // which the next sweep finds changed, and so reads again (the other order could skip a new process).
  const entry = entryOf(pid);
  if (entry === null) return null;
  const known = starts.get(pid);
  if (known !== undefined && known.startTicks < sinceTicks && known.ino === entry.ino && known.ctimeMs === entry.ctimeMs) return null;
  const info = processInfo(pid);
  if (info === null) return null;
  if (entry.ino > 0) starts.set(pid, { ino: entry.ino, ctimeMs: entry.ctimeMs, startTicks: info.startTicks });
  return info.startTicks >= sinceTicks ? info : null;
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
