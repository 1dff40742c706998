import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { Writer } from './writer.ts';

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
 * means nothing here), so null for another host's. A writer of this host with no pid runs nowhere.
 */
export function writerIsAlive(writer: Writer): boolean | null {
  if (!sameHost(writer.host)) return null;
  return writer.pid !== null && isProcessAlive(writer.pid);
}

/** A writer of this host whose process no longer runs. One on another host cannot be probed: it is not gone as far as this host can tell. */
export function writerIsGone(writer: Writer): boolean {
  return writerIsAlive(writer) === false;
}
