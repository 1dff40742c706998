import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAX_COMMITS_LISTED, MAX_DIFF_BYTES, type TurnChanges } from '../../events/workspace.ts';
import { gitOk, onRepository, runGit } from './git.ts';
import type { Repository } from './repositories.ts';
import { WorkspaceError } from './worktrees.ts';

/**
 * What a turn changed in its worktree against `base` (its HEAD before the turn): the commits it made,
 * and every file that differs between `base` and what the worktree holds now, committed or not,
 * untracked files included (ignored ones not). The uncommitted part is read through a temporary index
 * (a copy of the worktree's, `git add -A` into it): the worktree's own index, which the agent or the
 * user may be using, is never touched.
 */
export function readTurnChanges(repo: Repository, path: string, base: string): Promise<TurnChanges> {
  return onRepository(repo.gitDir, async () => {
    if (!existsSync(path) || !existsSync(repo.path))
      throw new WorkspaceError(
        `what the turn changed could not be read: ${existsSync(repo.path) ? `its worktree ${path} is gone` : `repository ${repo.name} is no longer at ${repo.path} (moved or deleted while the daemon runs)`}`,
      );
    const head = (await gitOk(path, ['rev-parse', '--verify', 'HEAD^{commit}'])).trim();
    const range = `${base}..${head}`;
    const listed = await gitOk(path, ['log', '--no-color', `--max-count=${MAX_COMMITS_LISTED}`, '--format=%H%x00%s', range]);
    const commits = listed
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [sha, subject] = line.split('\0');
        return { sha: sha!, subject: (subject ?? '').slice(0, 1000) };
      });
    const commitCount = Number((await gitOk(path, ['rev-list', '--count', range])).trim());
    const index = join(tmpdir(), `runledger-index-${process.pid}-${randomBytes(6).toString('hex')}`);
    try {
      const own = (await gitOk(path, ['rev-parse', '--path-format=absolute', '--git-path', 'index'])).trim();
      if (existsSync(own)) copyFileSync(own, index);
      const env = { GIT_INDEX_FILE: index };
      await gitOk(path, ['add', '--all', '--', '.'], { env });
      const against = (rev: string) => gitOk(path, ['diff', '--cached', '--no-renames', '--numstat', rev, '--'], { env });
      const total = numstat(await against(base));
      const uncommitted = numstat(await against(head));
      const diff = await runGit(path, ['diff', '--cached', '--no-renames', '--no-color', '--no-ext-diff', base, '--'], {
        env,
        maxBytes: MAX_DIFF_BYTES,
      });
      if (diff.code !== 0) throw new WorkspaceError(`the diff of the turn could not be read: ${diff.stderr}`);
      const cut = diff.stdoutBytes > MAX_DIFF_BYTES;
      return {
        repo: repo.name,
        base,
        head,
        filesChanged: total.files,
        insertions: total.insertions,
        deletions: total.deletions,
        commits,
        commitCount,
        uncommittedFiles: uncommitted.files,
        diff: cut ? `${diff.stdout}\n[runledger: the diff is ${diff.stdoutBytes} bytes; the log keeps its first ${MAX_DIFF_BYTES}]\n` : diff.stdout,
        diffBytes: diff.stdoutBytes,
        diffCut: cut,
      };
    } finally {
      rmSync(index, { force: true });
      rmSync(`${index}.lock`, { force: true });
    }
  });
}

/** `git diff --numstat`: files, lines added and removed (a binary file counts as a file, with no lines). */
function numstat(text: string): { files: number; insertions: number; deletions: number } {
  let files = 0;
  let insertions = 0;
  let deletions = 0;
  for (const line of text.split('\n')) {
    const m = line.match(/^(\d+|-)\t(\d+|-)\t/);
    if (!m) continue;
    files++;
    if (m[1] !== '-') insertions += Number(m[1]);
    if (m[2] !== '-') deletions += Number(m[2]);
  }
  return { files, insertions, deletions };
}
