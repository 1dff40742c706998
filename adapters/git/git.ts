import { spawn } from 'node:child_process';

/**
 * One git command and what it said. Git runs with a plain environment for scripting: no pager, no
 * prompt for credentials (a push or fetch that needs one fails, saying so, rather than waiting for a
 * terminal nobody watches), messages in English (they are recorded), and none of the `GIT_*` variables
 * a caller's own git (a hook, a test inside a repository) may have set pointing elsewhere.
 */
export interface GitAnswer {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** How many bytes stdout had, all of it (more than `stdout` holds when it was cut at `maxBytes`). */
  readonly stdoutBytes: number;
}

export interface GitOptions {
  /** Laid over the cleaned environment (`GIT_INDEX_FILE` for a temporary index, say). */
  readonly env?: Readonly<Record<string, string>>;
  /** Keeps at most this many bytes of stdout (the rest is counted, not kept). */
  readonly maxBytes?: number;
  /** Killed after this long: a git command on a local repository that takes it is stuck (a network mount, a lock). */
  readonly timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 120_000;
const STDERR_BYTES = 8 * 1024;

export function runGit(cwd: string, args: readonly string[], options: GitOptions = {}): Promise<GitAnswer> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !key.startsWith('GIT_')) env[key] = value;
  Object.assign(env, { GIT_TERMINAL_PROMPT: '0', GIT_PAGER: 'cat', LC_ALL: 'C', GIT_OPTIONAL_LOCKS: '0' }, options.env ?? {});
  const maxBytes = options.maxBytes ?? 16 * 1024 * 1024;
  return new Promise((resolve) => {
    const child = spawn('git', ['-c', 'core.quotepath=off', ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let kept = 0;
    let total = 0;
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => {
      total += chunk.length;
      if (kept < maxBytes) {
        const part = chunk.subarray(0, maxBytes - kept);
        out.push(part);
        kept += part.length;
      }
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      if (err.length < STDERR_BYTES) err += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    const done = (code: number | null, stderr: string) => {
      clearTimeout(timer);
      resolve({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: stderr.trim(), stdoutBytes: total });
    };
    // A folder that is gone (the repository deleted) fails the spawn itself: ENOENT on its cwd.
    child.on('error', (error) => done(null, error.message));
    child.on('close', (code, signal) => done(code, signal ? `${err}\ngit was stopped by ${signal}` : err));
  });
}

/** The answer's stdout, or an error naming the command and what git said. */
export async function gitOk(cwd: string, args: readonly string[], options: GitOptions = {}): Promise<string> {
  const answer = await runGit(cwd, args, options);
  if (answer.code !== 0) throw new GitError(args, answer);
  return answer.stdout;
}

export class GitError extends Error {
  constructor(
    readonly args: readonly string[],
    readonly answer: GitAnswer,
  ) {
    super(`git ${args.join(' ')} failed${answer.code === null ? '' : ` (exit ${answer.code})`}: ${lastLines(answer.stderr) || 'no message'}`);
  }
}

function lastLines(text: string): string {
  return text.split('\n').slice(-3).join(' ').slice(0, 1000);
}

/**
 * Git commands on one repository run one at a time in this process, whichever lane asks (two lanes
 * making their worktrees at once would otherwise trip over git's own lock files, `index.lock` and the
 * worktree registry's, and fail one of them). Keyed by the repository's common git folder, so two
 * names of one repository share a queue. A failed command does not stop the queue.
 */
const queues = new Map<string, Promise<unknown>>();

export function onRepository<T>(key: string, work: () => Promise<T>): Promise<T> {
  const before = queues.get(key) ?? Promise.resolve();
  const mine = before.then(work, work);
  const tail = mine.catch(() => undefined);
  queues.set(key, tail);
  void tail.then(() => {
    if (queues.get(key) === tail) queues.delete(key);
  });
  return mine;
}
