import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';

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
    // EPERM: it exists but belongs to someone else.
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
    return false;
  }
}

export function sameHost(host: string): boolean {
  return host === hostname();
}
