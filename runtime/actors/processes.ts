import { readdirSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { Writer } from '../../actors/writer.ts';
import { codeOf } from '../../events/thrown.ts';
import { PROCESS_INCARNATION } from '../store/processWriter.ts';

/**
 * Whether a process of this host still runs. Signal 0 probes without touching it, but answers for a
 * zombie too — a dead process nobody reaped, which in a container whose first process reaps nothing
 * stays for good — so where /proc tells, a zombie counts as dead.
 */
export function isProcessAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: it exists but belongs to someone else. Anything else (ESRCH) is the answer asked for:
    // no such process.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  return !isZombie(pid);
}

function isZombie(pid: number): boolean {
  try {
    // The state is the first field after the command name, which is in parentheses and may hold spaces.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
  } catch {
    // No /proc to tell (not Linux), or the process ended since signal 0 answered: a state that
    // cannot be read is no zombie, and signal 0's answer stands.
    return false;
  }
}

function sameHost(host: string): boolean {
  return host === hostname();
}

/**
 * Whether a writer's process still runs, where that can be read: on this host only (a pid elsewhere
 * means nothing here), so null for another host's. A writer of this host with no pid runs nowhere, and
 * one naming this process's pid with another incarnation is a former life of it.
 */
export function writerIsAlive(writer: Writer): boolean | null {
  if (!sameHost(writer.host)) return null;
  if (writer.pid === null) return false;
  // This process's pid in another life (a container restarted, its board pid 1 again): that life is over.
  if (writer.incarnation !== undefined && writer.pid === process.pid) return writer.incarnation === PROCESS_INCARNATION;
  return isProcessAlive(writer.pid);
}

/** A writer of this host whose process no longer runs. One on another host cannot be probed: it is not gone as far as this host can tell. */
export function writerIsGone(writer: Writer): boolean {
  return writerIsAlive(writer) === false;
}

/**
 * Whether any process of the group `pgid` still runs. Signal 0 answers for zombies too, and a zombie
 * runs nothing; where the first process of a container does not reap orphans, the group's dead
 * members stay zombies for good. So where /proc exists, only members that are not zombies count.
 */
export function groupAlive(pgid: number | null): boolean {
  if (pgid === null) return false;
  try {
    process.kill(-pgid, 0);
  } catch (error) {
    // EPERM: the group exists, under another user; ESRCH: it is gone.
    return codeOf(error) === 'EPERM';
  }
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    // No /proc to read (not Linux): signal 0 answered, so the group counts as alive, zombies and all.
    return true;
  }
  return pids.some((pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // After "pid (comm) ": state, ppid, pgrp, ... (comm may itself hold spaces and parentheses).
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return Number(pgrp) === pgid && state !== 'Z' && state !== 'X';
    } catch {
      // ENOENT, ESRCH: that process ended between the listing and the read, so it is no member.
      return false;
    }
  });
}

/**
 * Sends `signal` to the process group `pgid`; false when the group was gone already (ESRCH). Any other
 * refusal (EPERM: another user's group, the pgid reused) is not thrown either: it is no group of ours
 * to stop, and there is nothing more to do about it.
 */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (error) {
    return codeOf(error) !== 'ESRCH';
  }
}
