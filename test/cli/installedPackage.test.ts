/**
 * runledger installed the way a user installs a command-line tool: the package `npm pack` makes,
 * installed by `npm install -g` into a prefix of its own, then run from another folder with none of
 * the checkout's development tools anywhere it could find them (no tsx, no typescript, no build.ts).
 *
 * One install for the file (npm install is the slow part). better-sqlite3 is given the prebuilt
 * binary the checkout already compiled, through prebuild-install's local-prebuilds setting, as a
 * user gets one from its release host; were npm to pick another version of it, it would be
 * compiled instead (about 75 s here), which the timeout allows for.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { DaemonProcess } from '../support/daemonProcess.ts';
import { repoRoot } from '../support/processes.ts';

/** Measured: about 7 s with the prebuilt binary, 75-85 s when better-sqlite3 is compiled. */
const INSTALL_MS = 300_000;

const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
  version: string;
  private?: boolean;
  devDependencies: Record<string, string>;
};

let work = '';
let tarball = '';
let prefix = '';

/** The environment of a user of the installed tool: node on PATH, a home of their own, nothing of the checkout's. */
function userEnv(home: string): NodeJS.ProcessEnv {
  return { PATH: `${join(prefix, 'bin')}:${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`, HOME: home, LANG: 'C.UTF-8' };
}

function npm(args: readonly string[], env: NodeJS.ProcessEnv = process.env): string {
  const done = spawnSync('npm', args, { cwd: work, encoding: 'utf8', env, timeout: INSTALL_MS - 30_000 });
  if (done.status !== 0) throw new Error(`npm ${args.join(' ')} failed (${done.status ?? done.signal}):\n${done.stdout}${done.stderr}`);
  return done.stdout;
}

/** prebuild-install's name for the checkout's better-sqlite3 binary, in a folder it is told to look in first. */
function localPrebuilds(): string {
  const folder = join(work, 'prebuilds');
  const sqlite = join(repoRoot, 'node_modules/better-sqlite3');
  const { version } = JSON.parse(readFileSync(join(sqlite, 'package.json'), 'utf8')) as { version: string };
  const staged = join(folder, 'staged');
  mkdirSync(join(staged, 'build/Release'), { recursive: true });
  cpSync(join(sqlite, 'build/Release/better_sqlite3.node'), join(staged, 'build/Release/better_sqlite3.node'));
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  const tar = spawnSync('tar', ['czf', join(folder, name), 'build'], { cwd: staged, encoding: 'utf8' });
  if (tar.status !== 0) throw new Error(`tar failed: ${tar.stderr}`);
  return folder;
}

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'runledger-install-'));
  // `npm pack` as a maintainer runs it, in the checkout (its prepack builds dist/ when stale).
  const packed = spawnSync('npm', ['pack', '--pack-destination', work, '--json'], { cwd: repoRoot, encoding: 'utf8', timeout: 120_000 });
  if (packed.status !== 0) throw new Error(`npm pack failed:\n${packed.stdout}${packed.stderr}`);
  tarball = join(work, (JSON.parse(packed.stdout) as { filename: string }[])[0]!.filename);
  prefix = join(work, 'prefix');
  npm(['install', '-g', '--prefix', prefix, tarball, '--prefer-offline', '--no-audit', '--no-fund'], {
    ...process.env,
    npm_config_better_sqlite3_local_prebuilds: localPrebuilds(),
  });
}, INSTALL_MS);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

/** A folder of the user's, away from the checkout and the install. */
function userFolder(name: string): string {
  const folder = join(work, name);
  mkdirSync(folder, { recursive: true });
  return folder;
}

/** The installed `runledger`, run as a user runs it. */
function installed(args: readonly string[], cwd: string, env: NodeJS.ProcessEnv) {
  return new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child: ChildProcess = spawn(join(prefix, 'bin/runledger'), args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`runledger ${args.join(' ')} did not end within 20 s:\n${stdout}${stderr}`));
    }, 20_000);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

describe('runledger as an installed package', () => {
  it('given npm pack, then the package holds the product only: the built JavaScript, its launcher, README and LICENSE', () => {
    const listed = spawnSync('tar', ['tzf', tarball], { encoding: 'utf8' }).stdout.trim().split('\n');
    const outsideDist = listed.filter((file) => !file.startsWith('package/dist/')).sort();
    expect(outsideDist).toEqual(['package/LICENSE', 'package/README.md', 'package/cli/runledger.js', 'package/package.json']);
    expect(listed).toContain('package/dist/cli/main.js');
    expect(listed.filter((file) => /\.ts$|\/(test|bench|sim|fixtures)\//.test(file))).toEqual([]);
    expect(manifest.private).toBeUndefined();
    expect(readFileSync(join(repoRoot, 'LICENSE'), 'utf8')).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} the runledger authors\n/);
  });

  it('given it installed with npm install -g, then from another folder it runs with no dev dependency: --version, a daemon with a real turn, submit, show and status', async () => {
    const modules = join(prefix, 'lib/node_modules');
    const present = Object.keys(manifest.devDependencies).filter(
      (name) => existsSync(join(modules, name)) || existsSync(join(modules, 'runledger/node_modules', name)),
    );
    expect(present).toEqual([]);
    expect(existsSync(join(modules, 'runledger/build.ts'))).toBe(false);

    const home = userFolder('home');
    const env = userEnv(home);
    const elsewhere = userFolder('elsewhere');
    expect(await installed(['--version'], elsewhere, env)).toEqual({ status: 0, stdout: `${manifest.version}\n`, stderr: '' });

    // A tiny agent of the user's: answers its prompt (on stdin) in plain text.
    const agent = join(userFolder('agent'), 'agent.mjs');
    writeFileSync(
      agent,
      "let p = ''; process.stdin.on('data', (c) => (p += c)); process.stdin.on('end', () => console.log('pong: ' + p.trim().split('\\n').pop()));\n",
    );
    const db = join(userFolder('log'), 'runledger.db');
    const daemon = await DaemonProcess.start(db, ['--exec', `node ${agent}`, '--budget-note', 'off'], {
      bin: join(prefix, 'bin/runledger'),
      cwd: userFolder('daemon-cwd'),
      env,
    });
    onTestFinished(() => daemon.signal('SIGKILL'));
    const board = ['--server', daemon.url, '--db', db];

    const submitted = await installed(['submit', '--lane', 'alice', '--prompt', 'ping', ...board], elsewhere, env);
    expect(submitted, submitted.stderr).toMatchObject({ status: 0, stdout: expect.stringMatching(/^[0-9a-f-]{36}\n$/) });
    const runId = submitted.stdout.trim();
    const followed = await installed(['show', runId, '--follow', '--json', ...board], elsewhere, env);
    expect(followed.status, followed.stdout + followed.stderr).toBe(0);
    expect(JSON.parse(followed.stdout.trim().split('\n').at(-1)!)).toMatchObject({ run_id: runId, state: 'succeeded', reply: 'pong: ping' });
    const status = await installed(['status', '--json', ...board], elsewhere, env);
    expect(status.status, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toBeTypeOf('object');

    // The live log backed up, and the copy verified, by the installed tools.
    const copy = join(userFolder('backups'), 'copy.db');
    const backedUp = await installed(['backup', copy, '--db', db], elsewhere, env);
    expect(backedUp.status, backedUp.stderr).toBe(0);
    const replayed = await installed(['replay', '--db', copy], elsewhere, env);
    expect(replayed.status, replayed.stdout + replayed.stderr).toBe(0);

    daemon.signal('SIGTERM');
    expect((await daemon.exit()).code, daemon.output).toBe(0);
  }, 60_000);

  it('given it installed, then the service unit it prints runs the installed launcher with this node', async () => {
    const home = userFolder('home-service');
    const printed = await installed(['service', 'print', '--user', '--', '--exec', 'cat'], userFolder('elsewhere'), userEnv(home));
    expect(printed.status, printed.stderr).toBe(0);
    expect(printed.stdout).toContain(
      `\nExecStart=${process.execPath} ${join(prefix, 'lib/node_modules/runledger/cli/runledger.js')} daemon --exec cat\n`,
    );
    expect(printed.stdout).toContain(`\nEnvironment=RUNLEDGER_HOME=${join(home, '.local/share/runledger')}\n`);
  });
});
