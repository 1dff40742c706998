/**
 * What `doctor --repo` says Codex's sandbox lets it do in a lane's worktree, read as Codex reads it:
 * the command line first, then the top-level `sandbox_mode` of `CODEX_HOME/config.toml`, else
 * `codex exec`'s default (read-only).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { codexSandboxOf, sandboxFinding } from '../../cli/actions/codexSandbox.ts';
import { tempDir } from '../support/tempStore.ts';

/** A CODEX_HOME holding `config`. */
function codexHome(config: string): string {
  const home = join(tempDir(), 'codex');
  mkdirSync(home);
  writeFileSync(join(home, 'config.toml'), config);
  return home;
}

describe('Codex sandbox, as doctor --repo reads it', () => {
  /** A CODEX_HOME with no config.toml: nothing there says a mode. */
  const none = { CODEX_HOME: '/nonexistent/codex-home' };

  it.each([
    ['codex', 'read-only', "codex exec's default"],
    ['codex exec -s workspace-write', 'workspace-write', '-s workspace-write'],
    ['codex --sandbox=danger-full-access', 'danger-full-access', '--sandbox danger-full-access'],
    ['codex exec --full-auto', 'workspace-write', '--full-auto'],
    ['codex --yolo', 'danger-full-access', '--yolo'],
    ['codex exec -c sandbox_mode="workspace-write"', 'workspace-write', '-c sandbox_mode=workspace-write'],
  ])('given --exec %s, then it is %s (%s)', (exec, mode, from) => {
    expect(codexSandboxOf(exec, none)).toEqual({ mode, from });
  });

  it('given no flag, then the top-level sandbox_mode of config.toml is read, not a profile’s', () => {
    const home = codexHome('model = "gpt-5-codex"\nsandbox_mode = "workspace-write"\n\n[profiles.ci]\nsandbox_mode = "danger-full-access"\n');
    expect(codexSandboxOf('codex', { CODEX_HOME: home })).toEqual({ mode: 'workspace-write', from: `sandbox_mode in ${join(home, 'config.toml')}` });
    const profileOnly = codexHome('[profiles.ci]\nsandbox_mode = "danger-full-access"\n');
    expect(codexSandboxOf('codex', { CODEX_HOME: profileOnly }).mode).toBe('read-only');
    // A CODEX_HOME given in the command line is the one Codex reads.
    expect(codexSandboxOf(`CODEX_HOME=${home} codex`, none).mode).toBe('workspace-write');
  });

  it('says what each lets it do in a worktree: read-only and workspace-write warn, with the fix', () => {
    expect(sandboxFinding('codex', none)).toMatchObject({ status: 'warning', fix: expect.stringContaining('-s workspace-write') });
    expect(sandboxFinding('codex -s workspace-write', none)).toMatchObject({
      status: 'warning',
      detail: expect.stringContaining('cannot commit'),
      fix: expect.stringContaining('danger-full-access'),
    });
    expect(sandboxFinding('codex -s danger-full-access', none)).toMatchObject({ status: 'ok' });
  });
});
