/**
 * Real git repositories in temporary folders, and the daemon working in them through the published
 * entry point: what the workspace tests share.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type BoardProcess, getRun, type Lifetime, repoRoot, startBoard, waitForTerminal } from '../e2e/support/cluster.ts';

/** Who the test's commits are by, for git in the tests and in the agents (which inherit the daemon's environment). */
export const GIT_IDENTITY = {
  GIT_AUTHOR_NAME: 'Test Agent',
  GIT_AUTHOR_EMAIL: 'agent@example.invalid',
  GIT_COMMITTER_NAME: 'Test Agent',
  GIT_COMMITTER_EMAIL: 'agent@example.invalid',
};

export const GIT_AGENT = `/bin/sh ${JSON.stringify(join(repoRoot, 'test/fixtures/workspace/gitAgent.sh'))}`;

/** git in `cwd`, as a test runs it: its stdout, trimmed; throws with git's words. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...cleanEnv(), ...GIT_IDENTITY }, stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !key.startsWith('GIT_')) env[key] = value;
  return env;
}

/** A repository with one commit (`README.md`) on `main`, in `dir/name`. */
export function makeRepo(dir: string, name = 'app'): string {
  const path = join(dir, name);
  mkdirSync(path, { recursive: true });
  git(path, 'init', '-q', '-b', 'main');
  writeFileSync(join(path, 'README.md'), 'hello\n');
  git(path, 'add', '-A');
  git(path, 'commit', '-q', '-m', 'first');
  return path;
}

/** `runledger daemon` with the git agent, its lanes in the repositories given as `--repo` texts. */
export function startRepoDaemon(db: string, repos: readonly string[], args: readonly string[] = [], lifetime: Lifetime = {}): Promise<BoardProcess> {
  return startBoard(db, {
    command: 'daemon',
    args: ['--exec', GIT_AGENT, '--heartbeat-s', '1', ...repos.flatMap((r) => ['--repo', r]), ...args],
    env: GIT_IDENTITY,
    ...lifetime,
  });
}

export interface Submission {
  lane: string;
  prompt: string;
  repo?: string;
  base?: string;
}

export async function post(board: Pick<BoardProcess, 'url' | 'token'>, body: Submission): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${board.url}/v1/runs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${board.token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

export async function submitRun(board: Pick<BoardProcess, 'url' | 'token'>, body: Submission): Promise<string> {
  const answer = await post(board, body);
  if (answer.status !== 201) throw new Error(`submit answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return answer.body.run_id as string;
}

export interface ChangesView {
  base: string;
  head: string;
  files_changed: number;
  insertions: number;
  deletions: number;
  commits: { sha: string; subject: string }[];
  commit_count: number;
  uncommitted_files: number;
}

/** Submits a turn and waits for its end: the run as `GET /v1/runs/{id}` answers it then. */
export async function turn(
  board: BoardProcess,
  body: Submission,
): Promise<{ runId: string; state: string; reply?: string; error?: string; changes?: ChangesView }> {
  const runId = await submitRun(board, body);
  await waitForTerminal(board.url, runId);
  return { runId, ...((await getRun(board.url, runId)) as unknown as { state: string; reply?: string; error?: string; changes?: ChangesView }) };
}
