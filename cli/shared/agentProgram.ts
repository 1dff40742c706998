import { spawnSync } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { programName, simpleCommand, type Word } from '../../actors/run/commandLine.ts';
import { DEMO_EXEC } from './options.ts';

/** What a command that starts an agent was given: `--exec`, `--demo`. */
export interface AgentGiven {
  readonly exec?: string | undefined;
  readonly demo?: boolean | undefined;
}

/**
 * The agent command line of `daemon`, `run` and `doctor` (docs/rules.md, "No silent stand-in"). Without
 * `--exec` they refuse rather than stand in for the agent: a team's real prompts answered by the demo
 * agent would be recorded as succeeded. The demo agent runs only under `--demo`. `doctor` stops there:
 * finding the program is one of its checks. The others look for it now, as each turn will start it in
 * `workspace` (a folder that may not exist yet: its nearest existing parent), so a missing agent stops
 * the start with how to install it instead of failing every run; `again` says how to try again.
 */
export function agentToRun(given: AgentGiven, check: { workspace: string; again: string } | 'doctor'): string {
  if (given.exec === undefined) {
    if (given.demo) return DEMO_EXEC;
    throw new Error(
      `no agent to ${check === 'doctor' ? 'check' : 'run'}: give --exec COMMAND (e.g. --exec claude or --exec "codex exec"; \`runledger doctor --exec COMMAND\` checks one first), ` +
        'or --demo to try runledger out with its demo agent',
    );
  }
  const program = simpleCommand(given.exec).words[0];
  if (program === undefined) throw new Error(`--exec "${given.exec}" names no program: give the agent's command line, e.g. --exec claude`);
  if (check === 'doctor') return given.exec;
  // A relative path is read from each lane's workspace, which may be a repository holding it: no lane, no check.
  if (program.text.includes('/') && !isAbsolute(program.text)) return given.exec;
  // What the shell's lookup would answer is certain without it: found (most starts; a process less).
  if (onPath(given.exec.slice(program.start, program.end), process.env.PATH) !== null) return given.exec;
  const found = findAgentProgram(given.exec, program, nearestFolder(check.workspace));
  if (!found.found) throw new Error(`cannot run the agent of --exec "${given.exec}": ${found.detail}; ${found.fix}, ${check.again}`);
  return given.exec;
}

/**
 * `path`, or the nearest folder above it that exists (the workspaces are made with the first run). A
 * file on the way (a --db under a file) is passed over: the daemon's opening of the log names it.
 */
function nearestFolder(path: string): string {
  let folder = path;
  while (!isFolder(folder) && dirname(folder) !== folder) folder = dirname(folder);
  return folder;
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false; // missing, or under a file
  }
}

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
  // The shell that looks it up could not start (or was stopped): that says nothing of the program.
  if (found.error) throw new Error(`cannot look up the agent of --exec "${exec}" in ${cwd}: ${found.error.message}`);
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

/**
 * Where `sh -c 'command -v NAME'` finds the program NAME typed, where that is certain without starting
 * the shell (~5 ms of CPU, and a process): NAME a plain word (nothing quoted, expanded or an option),
 * every entry of `path` absolute (an empty or relative one is read from the shell's folder, a `%`
 * one is dash's), and the first of its entries holding a file named NAME holding an executable
 * regular file: dash takes the first regular file, bash the first executable one, so both take that
 * one, or the builtin of that name, found as well. Null when the shell must say (not found, not
 * executable, anything else): findAgentProgram asks it.
 */
export function onPath(name: string, path: string | undefined): string | null {
  if (!/^[A-Za-z0-9._+][A-Za-z0-9._+-]*$/.test(name) || !path || !isExecutableFile('/bin/sh')) return null;
  for (const folder of path.split(':')) {
    if (!folder.startsWith('/') || folder.includes('%')) return null;
    // Joined as the shell joins them: the kernel, not this process, reads any `..` in it.
    const file = `${folder}/${name}`;
    let found: ReturnType<typeof statSync>;
    try {
      found = statSync(file, { throwIfNoEntry: false });
    } catch {
      return null;
    }
    if (found === undefined || found.isDirectory()) continue;
    return found.isFile() && isExecutableFile(file) ? file : null;
  }
  return null;
}

function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
