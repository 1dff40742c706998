/**
 * A lane's skills in its worktree of a repository: the agent finds them where it looks for a project's
 * skills in the folder it runs in, and they are never the lane's work (not in the agent's `git add -A`
 * commit, not in the turn's recorded changes, not in what `lane close` commits), while the main checkout
 * and the repository's own skills are left as they are. Real repositories, real git.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { closeWorktree } from '../../adapters/git/closeWorktree.ts';
import { checkRepository } from '../../adapters/git/repositories.ts';
import { readTurnChanges } from '../../adapters/git/turnChanges.ts';
import { prepareWorktree, worktreePath } from '../../adapters/git/worktrees.ts';
import { shareSkills, writeSkills } from '../../apps/computer/skills.ts';
import { tempDir } from '../support/tempStore.ts';
import { git, makeRepo } from './support.ts';

const REVIEW = { key: 'review', files: { 'SKILL.md': '---\nname: review\n---\nRead the diff.\n', 'scripts/check.sh': 'echo ok\n' } };

async function laneInRepo(setUp: (repo: string) => void = () => {}) {
  const dir = tempDir();
  const repoPath = makeRepo(dir);
  setUp(repoPath);
  const repo = await checkRepository('app', repoPath);
  const root = join(dir, 'workspaces', 'local');
  const path = worktreePath(root, 'app', 'alice');
  const ready = await prepareWorktree(repo, { lane: 'alice', path });
  // What the claim did: the lane's skills in its plain folder.
  writeSkills(join(root, 'alice'), 'claude', [REVIEW]);
  return { repo, repoPath, root, path, head: ready.head };
}

describe('a lane’s skills in its worktree', () => {
  it('are where the agent looks, and never part of the branch, the turn’s changes or the close commit', async () => {
    const { repo, repoPath, root, path, head } = await laneInRepo();
    const exclude = readFileSync(join(repoPath, '.git', 'info', 'exclude'), 'utf8');

    expect(await shareSkills(join(root, 'alice'), path, 'claude')).toEqual({ copied: ['review'], theRepositorys: [] });
    expect(readFileSync(join(path, '.claude/skills/review/SKILL.md'), 'utf8')).toBe(REVIEW.files['SKILL.md']);
    expect(readFileSync(join(path, '.claude/skills/review/scripts/check.sh'), 'utf8')).toBe('echo ok\n');
    expect(git(path, 'status', '--porcelain')).toBe('');

    // The agent's turn: a file, committed the way agents do, everything at once.
    writeFileSync(join(path, 'fix.txt'), 'fixed\n');
    git(path, 'add', '-A');
    git(path, 'commit', '-q', '-m', 'fix it');
    expect(git(path, 'show', '--name-only', '--format=', 'HEAD')).toBe('fix.txt');
    const changes = await readTurnChanges(repo, path, head);
    expect(changes).toMatchObject({ filesChanged: 1, commitCount: 1, uncommittedFiles: 0 });
    expect(changes.diff).not.toContain('skills');

    // A later turn gets them again (the claim may have brought new files); still nothing to commit.
    await shareSkills(join(root, 'alice'), path, 'claude');
    expect(git(path, 'status', '--porcelain')).toBe('');
    // Closing the lane commits nothing of them and is not stopped by them.
    writeFileSync(join(path, 'wip.txt'), 'half done\n');
    const closed = await closeWorktree(path, 'alice');
    expect(git(repoPath, 'show', '--name-only', '--format=', closed.committed!)).toBe('wip.txt');
    expect(existsSync(path)).toBe(false);
    // The main checkout: untouched, git's shared exclude file included.
    expect(git(repoPath, 'status', '--porcelain', '--ignored')).toBe('');
    expect(readFileSync(join(repoPath, '.git', 'info', 'exclude'), 'utf8')).toBe(exclude);
  });

  it('leave the repository’s own skill of the same name as it is, and say so', async () => {
    const own = '---\nname: review\n---\nThe team’s own review.\n';
    const { root, path } = await laneInRepo((repoPath) => {
      mkdirSync(join(repoPath, '.claude/skills/review'), { recursive: true });
      writeFileSync(join(repoPath, '.claude/skills/review/SKILL.md'), own);
      git(repoPath, 'add', '-A');
      git(repoPath, 'commit', '-q', '-m', 'our review skill');
    });
    expect(await shareSkills(join(root, 'alice'), path, 'claude')).toEqual({ copied: [], theRepositorys: ['review'] });
    expect(readFileSync(join(path, '.claude/skills/review/SKILL.md'), 'utf8')).toBe(own);
    expect(git(path, 'status', '--porcelain')).toBe('');
  });

  it('without skills, leave the worktree as it is', async () => {
    const { path } = await laneInRepo();
    expect(await shareSkills(join(tempDir(), 'no-lane'), path, 'codex')).toEqual({ copied: [], theRepositorys: [] });
    expect(existsSync(join(path, '.codex'))).toBe(false);
  });
});
