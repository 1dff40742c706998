import type { ChildProcess } from 'node:child_process';

/** How long a child's output pipes are waited on once it exited: a process of its own holding them open is not waited on for ever. */
const PIPES_GRACE_MS = 2_000;

/**
 * When `child` exited and what it wrote to its output pipes has been read. Node emits 'exit' when the
 * process is reaped, which can come before the last of its stdout and stderr is read from the pipes:
 * seen on a loaded machine, `runledger daemon` exited 2 and its message had not been read yet. 'close'
 * comes once both pipes reached their end; a process it left behind holding them (an agent) is given
 * PIPES_GRACE_MS. Called as the child is spawned, so neither event can pass unseen.
 */
export function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => {
    child.once('close', (code: number | null, signal: NodeJS.Signals | null) => resolve({ code, signal }));
    child.once('exit', (code, signal) => setTimeout(() => resolve({ code, signal }), PIPES_GRACE_MS).unref());
  });
}
