/**
 * The daemon and `run` find the agent's program without a shell where the shell's answer is certain
 * (cli/shared/agentProgram.ts, onPath): wherever onPath answers, `sh -c 'command -v NAME'` answers
 * the same file; where it cannot be sure, it answers nothing and the shell is asked, as before.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { onPath } from '../../cli/shared/agentProgram.ts';
import { tempDir } from '../support/tempStore.ts';

/** What the shell that runs each turn finds for `name` on `path`: its `command -v`, or null. */
function shellFinds(name: string, path: string, cwd: string): string | null {
  const found = spawnSync('/bin/sh', ['-c', `command -v ${name}`], { cwd, encoding: 'utf8', env: { PATH: path } });
  return found.status === 0 ? found.stdout.trim() : null;
}

function file(path: string, mode: number): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, '#!/bin/sh\n');
  chmodSync(path, mode);
}

describe('the agent found on PATH without a shell', () => {
  it('answers the file the shell finds, or leaves the answer to the shell', () => {
    const root = tempDir();
    const [a, b, c] = ['a', 'b', 'c'].map((f) => join(root, f)) as [string, string, string];
    file(join(a, 'agent'), 0o755);
    file(join(b, 'agent'), 0o755);
    file(join(a, 'plain'), 0o644); // not executable, first: the shell's business (dash takes it, bash passes over it)
    file(join(b, 'plain'), 0o755);
    mkdirSync(join(a, 'folder'), { recursive: true }); // a folder of that name is passed over, by both
    file(join(b, 'folder'), 0o755);
    mkdirSync(c);
    const path = `${a}:${b}:/usr/bin:/bin`;

    expect(onPath('agent', path)).toBe(`${a}/agent`);
    expect(onPath('folder', path)).toBe(`${b}/folder`);
    expect(onPath('cat', path)).toBe(shellFinds('cat', path, c));
    for (const name of ['agent', 'folder', 'cat']) expect(onPath(name, path), name).toBe(shellFinds(name, path, c));

    // Left to the shell: a non-executable file first, nothing of that name, a builtin only the shell
    // knows, anything typed that the shell would read (a quote, a variable, an option), and a PATH
    // with an entry read from the shell's folder.
    expect(onPath('plain', path)).toBeNull();
    expect(onPath('nosuchagent', path)).toBeNull();
    expect(onPath('cd', path)).toBeNull();
    for (const typed of ['"agent"', '$HOME', '-v', 'a b', '~/agent', 'b/agent']) expect(onPath(typed, path), typed).toBeNull();
    for (const relative of [`:${a}`, `bin:${a}`, `.:${a}`]) expect(onPath('agent', relative), relative).toBeNull();
    // One after the program's folder is never read.
    expect(onPath('agent', `${a}::bin`)).toBe(shellFinds('agent', `${a}::bin`, c));
    expect(onPath('agent', undefined)).toBeNull();
  });
});
