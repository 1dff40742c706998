import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, normalize, sep } from 'node:path';
import { isSafeId } from '../../events/idRule.ts';
import type { AgentKind } from '../run/outputReaders.ts';

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

function isInside(path: string): boolean {
  if (path === '' || isAbsolute(path) || path.includes('\0')) return false;
  const normal = normalize(path);
  return normal !== '..' && !normal.startsWith(`..${sep}`) && !normal.split(sep).includes('..');
}
