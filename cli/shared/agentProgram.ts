import { spawnSync } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { programName, type Word } from '../../actors/run/commandLine.ts';

/** Whether the agent's program is there, what it is, and when it is not, how to get it. */
export interface AgentProgram {
  readonly found: boolean;
  readonly detail: string;
  readonly fix?: string;
}

/**
 * Where the agent's program is, looked up by the shell that will run it (`/bin/sh -c`, as each turn
 * is started), in the folder it will run in: `runledger doctor` checks it, and the daemon at start, so
 * a missing agent is said once with how to install it rather than failing every run with exit 127.
 */
export function findAgentProgram(exec: string, program: Word, cwd: string): AgentProgram {
  const typed = exec.slice(program.start, program.end);
  const found = spawnSync('/bin/sh', ['-c', `command -v ${typed}`], { cwd, encoding: 'utf8', timeout: 10_000 });
  const where = found.status === 0 ? (found.stdout.trim().split('\n')[0] ?? '') : '';
  if (where !== '' && !where.includes('/')) return { found: true, detail: `${program.text} is a shell builtin` };
  if (where !== '') {
    const path = resolve(cwd, where);
    if (isExecutableFile(path)) return { found: true, detail: `${program.text} is ${path}` };
    return { found: false, detail: `not executable: ${path}`, fix: `make it executable (chmod +x ${path})` };
  }
  const name = programName({ words: [program], end: program.end });
  const fix = program.text.includes('/')
    ? program.text.startsWith('/')
      ? 'no such file: check the path'
      : "a relative path is read from the lane's workspace, where the daemon runs each turn: give it as an absolute path"
    : name === 'claude'
      ? "install Claude Code (npm install -g @anthropic-ai/claude-code, or its native installer) or put the folder holding claude on the daemon's PATH"
      : name === 'codex'
        ? "install Codex (npm install -g @openai/codex, or brew install codex) or put the folder holding codex on the daemon's PATH"
        : `install ${name} or put the folder holding it on the daemon's PATH (the command runs with /bin/sh -c)`;
  return { found: false, detail: `not found: ${program.text}${program.text.includes('/') ? '' : ' (looked up on PATH)'}`, fix };
}

function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
