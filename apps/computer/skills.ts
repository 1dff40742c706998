import { cpSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, normalize, sep } from 'node:path';
import type { AgentKind } from '../../adapters/agent/outputReaders.ts';
import { runGit } from '../../adapters/git/git.ts';
import { isSafeId } from '../../events/idRule.ts';

/** Where each agent looks for skills in its workspace. */
const SKILLS_FOLDER: Record<AgentKind, string> = {
  claude: '.claude/skills',
  codex: '.codex/skills',
  plain: '.skills',
};

export interface Skill {
  readonly key: string;
  readonly files: Readonly<Record<string, string>>;
}

/** Parses the claim answer's skills; throws naming the first key or path that could escape the workspace. */
export function parseSkills(value: unknown): Skill[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new Error('skills is not a list');
  return value.map((raw, i) => {
    const key: unknown = typeof raw === 'object' && raw !== null && 'key' in raw ? raw.key : undefined;
    const files: unknown = typeof raw === 'object' && raw !== null && 'files' in raw ? raw.files : undefined;
    if (!isSafeId(key)) throw new Error(`skill ${i} has a key that could name no folder: ${JSON.stringify(key)}`);
    if (files === undefined) return { key, files: {} };
    if (!files || typeof files !== 'object' || Array.isArray(files)) throw new Error(`skill ${key}: files is not an object`);
    const texts: Record<string, string> = {};
    for (const [path, text] of Object.entries(files)) {
      if (typeof text !== 'string') throw new Error(`skill ${key}: file ${JSON.stringify(path)} is not text`);
      if (!isInside(path)) throw new Error(`skill ${key}: file path ${JSON.stringify(path)} would leave the skill's folder`);
      texts[path] = text;
    }
    return { key, files: texts };
  });
}

/** Writes each skill under the agent's skills folder of the workspace, replacing older copies' files. */
export function writeSkills(workspace: string, kind: AgentKind, skills: readonly Skill[]): void {
  for (const skill of skills) {
    const root = join(workspace, SKILLS_FOLDER[kind], skill.key);
    for (const [path, text] of Object.entries(skill.files)) {
      const target = join(root, normalize(path));
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, text);
    }
  }
}

export interface SharedSkills {
  /** The skills copied into the worktree. */
  readonly copied: string[];
  /** The skills left out: the repository has a skill of that name already, which is the one the agent reads. */
  readonly theRepositorys: string[];
}

/**
 * A lane's skills, into its worktree of a repository, before each turn. The claim hands them over
 * before the lane's worktree may exist, so they are written to the lane's plain folder (`writeSkills`)
 * and copied from there, where the agent looks for a project's skills in the folder it runs in.
 *
 * They are the computer's, never the lane's work: each skill's folder gets a `.gitignore` of `*`, so
 * nothing in it goes into a commit of the agent's (`git add -A`), into the turn's recorded changes, or
 * into what `lane close` commits. Not git's `info/exclude`: a repository keeps one for all its worktrees
 * and its main checkout, so the team's own checkout would start ignoring files of those names too. A
 * skill folder the repository tracks is the repository's own: left as it is, not overwritten.
 */
export async function shareSkills(laneFolder: string, worktree: string, kind: AgentKind): Promise<SharedSkills> {
  const from = join(laneFolder, SKILLS_FOLDER[kind]);
  const shared: SharedSkills = { copied: [], theRepositorys: [] };
  if (!existsSync(from)) return shared;
  for (const key of readdirSync(from, { withFileTypes: true })
    .filter((e) => e.isDirectory() && isSafeId(e.name))
    .map((e) => e.name)) {
    const folder = join(SKILLS_FOLDER[kind], key);
    const tracked = await runGit(worktree, ['ls-files', '--', folder]);
    if (tracked.code !== 0) throw new Error(`the skills of ${worktree} could not be shared: git ls-files said ${tracked.stderr || 'nothing'}`);
    if (tracked.stdout.trim() !== '') {
      shared.theRepositorys.push(key);
      continue;
    }
    const to = join(worktree, folder);
    cpSync(join(from, key), to, { recursive: true, force: true });
    writeFileSync(join(to, '.gitignore'), '*\n');
    shared.copied.push(key);
  }
  return shared;
}

function isInside(path: string): boolean {
  if (path === '' || isAbsolute(path) || path.includes('\0')) return false;
  const normal = normalize(path);
  return normal !== '..' && !normal.startsWith(`..${sep}`) && !normal.split(sep).includes('..');
}
