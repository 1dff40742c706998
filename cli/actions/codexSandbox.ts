import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { simpleCommand } from '../../actors/run/commandLine.ts';

/**
 * What Codex's sandbox lets it do in a lane's worktree, read from its command line, else from the
 * `sandbox_mode` of its config.toml, else `codex exec`'s default. Seen with the real Codex: `read-only`
 * (the default) refuses every write ("Read-only file system"); `workspace-write` edits the worktree
 * but cannot commit, as it keeps every git folder read-only and a worktree's is the repository's own
 * (`<repo>/.git/worktrees/<lane>`); `danger-full-access` does both.
 */

export type CodexSandbox = 'read-only' | 'workspace-write' | 'danger-full-access';

export interface SandboxRead {
  readonly mode: CodexSandbox;
  /** Where the mode was read: `--sandbox workspace-write`, `sandbox_mode in <file>`, `codex exec's default`. */
  readonly from: string;
}

const MODES: readonly string[] = ['read-only', 'workspace-write', 'danger-full-access'];

export function codexSandboxOf(exec: string, env: NodeJS.ProcessEnv = process.env): SandboxRead {
  const args = simpleCommand(exec).words.map((w) => w.text);
  for (const [i, arg] of args.entries()) {
    if (arg === '--dangerously-bypass-approvals-and-sandbox' || arg === '--yolo') return { mode: 'danger-full-access', from: arg };
    if (arg === '--full-auto') return { mode: 'workspace-write', from: arg };
    const value = arg === '-s' || arg === '--sandbox' ? args[i + 1] : arg.startsWith('--sandbox=') ? arg.slice('--sandbox='.length) : null;
    if (value && MODES.includes(value)) return { mode: value as CodexSandbox, from: `${arg.split('=')[0]} ${value}` };
    const config = arg.startsWith('sandbox_mode=') && (args[i - 1] === '-c' || args[i - 1] === '--config') ? arg.slice('sandbox_mode='.length) : null;
    const unquoted = config?.replace(/^["']|["']$/g, '');
    if (unquoted && MODES.includes(unquoted)) return { mode: unquoted as CodexSandbox, from: `-c sandbox_mode=${unquoted}` };
  }
  const home = /(?:^|\s)CODEX_HOME=(\S+)/.exec(exec)?.[1] ?? env.CODEX_HOME ?? join(env.HOME ?? homedir(), '.codex');
  const file = join(home, 'config.toml');
  if (existsSync(file)) {
    // Top-level keys come before the first [table]; a profile's sandbox_mode is not read here.
    const top = readFileSync(file, 'utf8').split(/^\s*\[/m)[0] ?? '';
    const mode = /^\s*sandbox_mode\s*=\s*["']([a-z-]+)["']/m.exec(top)?.[1];
    if (mode && MODES.includes(mode)) return { mode: mode as CodexSandbox, from: `sandbox_mode in ${file}` };
  }
  return { mode: 'read-only', from: "codex exec's default" };
}

/** The doctor's word on it for a lane in a worktree: what Codex may do there, and how to let it do more. */
export function sandboxFinding(exec: string, env: NodeJS.ProcessEnv = process.env) {
  const { mode, from } = codexSandboxOf(exec, env);
  switch (mode) {
    case 'read-only':
      return {
        status: 'warning' as const,
        detail: `its sandbox is read-only (${from}): it can read the lane's worktree but not edit it`,
        fix: 'add -s workspace-write to --exec to let it edit (not commit), or -s danger-full-access to let it commit too',
      };
    case 'workspace-write':
      return {
        status: 'warning' as const,
        detail:
          `its sandbox is workspace-write (${from}): it edits the lane's worktree but cannot commit, its sandbox keeping the ` +
          "repository's git folder read-only; its edits are recorded uncommitted, and lane close commits them",
        fix: 'to let it commit, run it with -s danger-full-access, on a machine set apart for it',
      };
    case 'danger-full-access':
      return { status: 'ok' as const, detail: `no sandbox (${from}): it edits and commits in the lane's worktree` };
    default: {
      const unknown: never = mode;
      throw new Error(`no finding for sandbox ${String(unknown)}`);
    }
  }
}
