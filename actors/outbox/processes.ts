import { hostname } from 'node:os';

/** Whether a process of this host still runs (signal 0 probes without touching it). */
export function isProcessAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function sameHost(host: string): boolean {
  return host === hostname();
}
