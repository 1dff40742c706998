/**
 * Issue 26: runledger as a systemd service. `service print` writes a unit that runs this runledger's
 * daemon with the arguments given, restarts it on failure, stops it with SIGTERM and time to drain,
 * and pins the home; `systemd-analyze verify` (Debian's systemd) accepts it. `service install --user`
 * writes it where the user's systemd reads it and says how to start it.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { shellWord, systemdWord } from '../../cli/actions/serviceUnit.ts';
import { runCli } from '../e2e/support/cluster.ts';
import { runInProcess } from '../support/inProcessCli.ts';
import { repoRoot } from '../support/processes.ts';
import { tempDir } from '../support/tempStore.ts';

const EXEC = 'claude -p --output-format stream-json --verbose';

/** `systemd-analyze verify` of a unit's text, as the system's or (`user`) a user's systemd reads it. */
function verify(text: string, user: boolean): { status: number | null; stderr: string } {
  const dir = tempDir();
  const file = join(dir, 'runledger.service');
  writeFileSync(file, text);
  const runtime = join(dir, 'runtime');
  mkdirSync(runtime, { mode: 0o700 });
  const checked = spawnSync('systemd-analyze', [...(user ? ['--user'] : []), 'verify', file], {
    encoding: 'utf8',
    timeout: 20_000,
    // A user's systemd wants its runtime folder, which a test process has none of.
    env: { ...process.env, XDG_RUNTIME_DIR: runtime },
  });
  return { status: checked.status, stderr: checked.stderr };
}

function userEnv(dir: string, more: Record<string, string> = {}): Record<string, string> {
  return { HOME: join(dir, 'home'), XDG_DATA_HOME: '', XDG_CONFIG_HOME: '', ...more };
}

describe('runledger service print', () => {
  it('given daemon arguments, then it prints a system unit running this node and runledger with them, restarting on failure, SIGTERM with time to drain, the home pinned; systemd-analyze verify passes', async () => {
    const dir = tempDir();
    const printed = await runCli(['service', 'print', '--', '--exec', EXEC, '--slots', '2', '--drain-s', '120'], 20_000, { env: userEnv(dir) });
    expect(printed.status, printed.stderr).toBe(0);
    const unit = printed.stdout;
    expect(unit).toContain(`\nExecStart=${process.execPath} ${join(repoRoot, 'cli/runledger.js')} daemon --exec "${EXEC}" --slots 2 --drain-s 120\n`);
    expect(unit).toContain('\nRestart=on-failure\n');
    expect(unit).toContain('\nKillSignal=SIGTERM\n');
    expect(unit).toContain('\nKillMode=mixed\n');
    expect(unit).toContain('\nTimeoutStopSec=150\n');
    expect(unit).toContain(`\nEnvironment=RUNLEDGER_HOME=${join(dir, 'home/.local/share/runledger')}\n`);
    expect(unit).toMatch(/\nEnvironment=PATH=\S+\n/);
    expect(unit).toMatch(/\nUser=\S+\n/);
    expect(unit).toContain('\nWantedBy=multi-user.target\n');
    expect(verify(unit, false)).toEqual({ status: 0, stderr: '' });
  });

  it("given --user and no --drain-s, then a user unit: the daemon's default drain (60 s) and its margin, RUNLEDGER_HOME as set; systemd-analyze --user verify passes", async () => {
    const dir = tempDir();
    const home = join(dir, 'runledger home');
    const printed = await runCli(['service', 'print', '--user', '--', '--exec', 'codex exec', '--port', '7421'], 20_000, {
      env: userEnv(dir, { RUNLEDGER_HOME: home }),
    });
    expect(printed.status, printed.stderr).toBe(0);
    expect(printed.stdout).toContain('\nTimeoutStopSec=90\n');
    expect(printed.stdout).toContain(`\nEnvironment="RUNLEDGER_HOME=${home}"\n`);
    expect(printed.stdout).not.toMatch(/\nUser=/);
    expect(printed.stdout).toContain('\nWantedBy=default.target\n');
    expect(verify(printed.stdout, true)).toEqual({ status: 0, stderr: '' });
  });

  it.each([
    [[], 'the unit would run a daemon with no agent, which refuses to start'],
    [['--exec', 'claude', '--token', 'secret'], 'a token in the unit is readable by every local user'],
    [
      ['--exec', 'claude', '--server', 'http://board:7420', '--computer', 'c2'],
      'a computer joining a board needs its token: give the daemon --token-file FILE',
    ],
    [['--exec', 'claude', '--db', 'here.db'], '--db here.db is relative'],
    [['--exec', 'claude', '--slots', 'many'], "in the daemon's arguments (after --): error: option '--slots <n>' argument 'many' is invalid"],
  ])('given daemon arguments %j, then it refuses, exit 2, printing no unit', async (args, said) => {
    // In this process (the same dispatch): refused before a unit is made, the home of no matter.
    const result = await runInProcess(['service', 'print', '--', ...args]);
    expect(result).toMatchObject({ status: 2, stdout: '' });
    expect(result.stderr).toContain(said);
  });

  it('quotes words for systemd: spaces and quotes in double quotes, % and $ doubled', () => {
    expect(systemdWord('plain/path-1.db')).toBe('plain/path-1.db');
    expect(systemdWord('claude -p')).toBe('"claude -p"');
    expect(systemdWord('say "hi" \\ 100% $HOME')).toBe('"say \\"hi\\" \\\\ 100%% $$HOME"');
    expect(() => systemdWord('a\nb')).toThrow(/line break/);
    expect(shellWord("it's")).toBe("'it'\\''s'");
  });
});

describe('runledger service install --user', () => {
  it('given daemon arguments, then it writes the unit print makes where the user systemd reads it and says the systemctl commands; again only with --force', async () => {
    const dir = tempDir();
    const env = userEnv(dir);
    const args = ['--exec', 'claude', '--slots', '2'];
    const installed = await runCli(['service', 'install', '--user', '--', ...args], 20_000, { env });
    expect(installed.status, installed.stderr).toBe(0);
    const path = join(dir, 'home/.config/systemd/user/runledger.service');
    const printed = await runCli(['service', 'print', '--user', '--', ...args], 20_000, { env });
    expect(readFileSync(path, 'utf8').replace(/^# .*\n/, '')).toBe(printed.stdout.replace(/^# .*\n/, ''));
    expect(installed.stdout).toContain(`wrote ${path}: runledger daemon --exec claude --slots 2\n`);
    expect(installed.stdout).toContain('  systemctl --user daemon-reload\n  systemctl --user enable --now runledger\n');
    expect(installed.stdout).toContain('  loginctl enable-linger ');
    expect(installed.stdout).toContain('  systemctl --user restart runledger\n');

    const again = await runCli(['service', 'install', '--user', '--', ...args], 20_000, { env });
    expect(again.status).toBe(2);
    expect(again.stderr).toContain(`runledger: ${path} exists already: --force replaces it`);
    expect((await runCli(['service', 'install', '--user', '--force', '--', '--exec', 'codex exec'], 20_000, { env })).status).toBe(0);
    expect(readFileSync(path, 'utf8')).toContain('daemon --exec "codex exec"\n');
  });
});
