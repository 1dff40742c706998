import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { NOTICE_KINDS } from '../../actors/board/inbox/noticeKinds.ts';
import { HOOK_NAMES } from '../../apps/board/chores/hooks/hookNames.ts';
import { isBuilt } from '../../build.ts';
import packageJson from '../../package.json' with { type: 'json' };
import { runInProcess } from '../support/inProcessCli.ts';
import { repoRoot, runledger } from '../support/processes.ts';

const cli = join(repoRoot, 'cli/runledger.js');
const tracer = fileURLToPath(new URL('../fixtures/cli/traceImports.mjs', import.meta.url));

/**
 * The modules `runledger ARGS` loads: packages by their name, the rest by their path in the
 * repository. dist/ is a bundle: each of its files that the command loaded stands for the modules
 * the build put in it (dist/.bundle.json).
 */
function modulesLoadedBy(args: readonly string[]): string[] {
  const folder = mkdtempSync(join(tmpdir(), 'runledger-imports-'));
  try {
    const trace = join(folder, 'imports');
    spawnSync(process.execPath, ['--import', tracer, cli, ...args], {
      cwd: repoRoot,
      encoding: 'utf8',
      timeout: 20_000,
      env: { ...process.env, RUNLEDGER_TRACE_IMPORTS: trace },
    });
    const root = pathToFileURL(join(repoRoot, '/')).href;
    const bundled = JSON.parse(readFileSync(join(repoRoot, 'dist/.bundle.json'), 'utf8')) as Record<string, string[]>;
    // node_modules may be a link: its modules resolve to where it points. A package Node carries
    // (node:internal/deps/undici/undici) by its name too.
    const name = (path: string) => path.match(/(?:^|\/)(?:node_modules|^node:internal\/deps)\/((@[^/]+\/)?[^/]+)\//)?.[1] ?? path;
    const loaded = readFileSync(trace, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((url) => url.replace(root, ''));
    return [...new Set(loaded.flatMap((path) => bundled[path] ?? [path]).map(name))];
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

// undici: what `fetch` loads on its first call (~0.25 s of CPU with its WebAssembly parser compiled).
const HEAVY = ['zod', 'better-sqlite3', 'kysely', 'rxjs', 'nact', 'pino', 'ws', 'undici'];

describe('runledger starts with what the command needs', () => {
  it('runs the built files, built from the sources as they are (the global setup builds them when stale)', () => {
    expect(isBuilt()).toBe(true);
  });

  // A checkout (build.ts beside cli/) builds what is missing: test/cli/staleBuild.test.ts.
  it('an installation without its built files (no build.ts, no dist/) says so and to install it again, exit 2, never trying to build', () => {
    const folder = mkdtempSync(join(tmpdir(), 'runledger-unbuilt-'));
    try {
      mkdirSync(join(folder, 'cli'));
      copyFileSync(cli, join(folder, 'cli/runledger.js'));
      const result = spawnSync(process.execPath, [join(folder, 'cli/runledger.js'), '--help'], { encoding: 'utf8', timeout: 20_000 });
      expect(result).toMatchObject({
        status: 2,
        stdout: '',
        stderr: `runledger: this installation in ${folder}/ has no dist/cli/main.js (a package packed without its build): install runledger again from a package made by \`npm pack\`\n`,
      });
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('--version prints the package version, one line, exit 0', () => {
    const result = runledger(['--version']);
    expect(result).toMatchObject({ status: 0, stdout: `${packageJson.version}\n`, stderr: '' });
  });

  it('--help and --version load commander and the command definitions, no action, schema or store', () => {
    for (const args of [['--help'], ['--version']]) {
      const loaded = modulesLoadedBy(args);
      expect(loaded).toContain('@commander-js/extra-typings'); // which requires commander
      expect(loaded.filter((m) => m.includes('/cli/actions/') || HEAVY.includes(m))).toEqual([]);
      expect(
        loaded.filter(
          (m) =>
            m.startsWith('dist/') &&
            !/^dist\/(cli\/(main|program|runProgram)\.js|cli\/shared\/(options|parse|home)\.js|cli\/commands\/|actors\/run\/budget\.js|events\/(bounds|idRule|runStates)\.js|package\.json)/.test(
              m,
            ),
        ),
      ).toEqual([]);
    }
  });

  it('a command on a SQLite log loads the SQLite store and not the PostgreSQL driver (pg costs a start ~30 ms)', () => {
    const loaded = modulesLoadedBy(['audit', '--db', join(tmpdir(), 'runledger-no-such-folder', 'runledger.db')]);
    expect(loaded).toContain('better-sqlite3');
    expect(loaded.filter((m) => m === 'pg' || m.includes('/store/postgres/'))).toEqual([]);
    // Nor Node's modules for what it may do and does not: call a board, check a token, read a deflated checkpoint (runtime/lazyBuiltins.ts).
    expect(loaded.filter((m) => ['node:http', 'node:https', 'node:crypto', 'node:zlib'].includes(m))).toEqual([]);
  });

  it('a command on a new SQLite log, or an up-to-date one, reading it or opening it to write, loads no kysely (it only brings older logs forward)', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'runledger-kysely-'));
    try {
      const path = join(folder, 'runledger.db');
      expect(modulesLoadedBy(['token', 'add', 'ci', '--db', path])).not.toContain('kysely');
      expect(modulesLoadedBy(['audit', '--db', path])).not.toContain('kysely');
      expect(modulesLoadedBy(['computer', 'list', '--db', path])).not.toContain('kysely');
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('daemon loads no pino unless given --log-json, its only use (136 KB of the ~2 MB a start loads)', () => {
    // A log it cannot open (under a file): the daemon's action and all it imports load, then it exits.
    const loaded = modulesLoadedBy(['daemon', '--db', join(cli, 'runledger.db'), '--exec', 'cat']);
    expect(loaded).toContain('dist/cli/actions/daemon.js');
    expect(loaded).toContain('sonic-boom');
    expect(loaded).not.toContain('pino');
  });

  it('status loads its own action and what it formats, no schema or store', () => {
    const loaded = modulesLoadedBy(['status', '--server', 'http://127.0.0.1:9']);
    expect(loaded.filter((m) => m.includes('/cli/actions/'))).toEqual(['dist/cli/actions/status.js']);
    expect(loaded.filter((m) => HEAVY.includes(m))).toEqual([]);
  });

  it('submit loads its own action and the board call, no schema, store or fetch', () => {
    const loaded = modulesLoadedBy(['submit', '--server', 'http://127.0.0.1:9', '--token', 't', '--lane', 'x', '--prompt', 'hi']);
    expect(loaded.filter((m) => m.includes('/cli/actions/'))).toEqual(['dist/cli/actions/submit.js']);
    expect(loaded).toContain('dist/adapters/http/httpCall.js');
    expect(loaded.filter((m) => HEAVY.includes(m))).toEqual([]);
  });

  it('show, runs and lane load no event catalog, store or fetch (zod, for the rows they check)', () => {
    for (const args of [['show', 'abcdef12'], ['runs'], ['lane', 'x']]) {
      const loaded = modulesLoadedBy([...args, '--server', 'http://127.0.0.1:9', '--token', 't']);
      expect(loaded.filter((m) => m.startsWith('dist/events/') && /(catalog|Events)\.js$/.test(m))).toEqual([]);
      expect(loaded.filter((m) => HEAVY.includes(m) && m !== 'zod')).toEqual([]);
    }
  });

  // Every byte a start loads is parsed: rxjs's CommonJS build is 360 KB whole, zod's 64 locales 370 KB.
  it('the bundle holds the parts of rxjs and zod the code uses: rxjs from its ES module build, no zod locale but English', () => {
    const bundled = Object.values(JSON.parse(readFileSync(join(repoRoot, 'dist/.bundle.json'), 'utf8')) as Record<string, string[]>).flat();
    expect(bundled.filter((m) => m.includes('node_modules/rxjs/dist/cjs/'))).toEqual([]);
    expect(bundled.some((m) => m.includes('node_modules/rxjs/dist/esm/'))).toBe(true);
    expect(bundled.filter((m) => /node_modules\/zod\/v4\/locales\/(?!en\.js)/.test(m))).toEqual([]);
  });
});

/** Every command, by the words that name it. */
const COMMANDS = [
  'daemon',
  'server',
  'computer add',
  'computer list',
  'run',
  'doctor',
  'submit',
  'cancel',
  'status',
  'show',
  'runs',
  'lane',
  'audit',
  'replay',
  'rebuild',
  'tick',
  'adopt',
  'subscribe',
  'unsubscribe',
];

describe('the help of every command', () => {
  // Each read in this process, through the same program and dispatch (test/cli/commandHelpTexts.test.ts
  // runs the whole program's help through the real entry point): a process each cost 0.15 s of CPU or more.
  const helps: (readonly [string, string])[] = [];
  beforeAll(async () => {
    for (const command of COMMANDS) helps.push([command, (await runInProcess([...command.split(' '), '--help'])).stdout]);
  });

  it('shows a default only as what it is: no "(default: {})" or "(default: [])" for a repeatable option', () => {
    for (const [command, help] of helps) {
      expect(help, command).toMatch(/^Usage: runledger /);
      expect(help, command).not.toMatch(/default: (\{\}|\[\])/);
    }
  });

  it('names every notice kind for subscribe --kind and every hook for --hook, as their schemas have them', () => {
    const flat = (command: string) => helps.find(([c]) => c === command)![1].replace(/\s+/g, ' ');
    expect(flat('subscribe')).toContain(`what it hears (repeatable): ${NOTICE_KINDS.join(', ')}; run.ended when none`);
    const hooks = `${HOOK_NAMES.slice(0, -1).join(', ')} or ${HOOK_NAMES.at(-1)}`;
    for (const command of ['daemon', 'server']) expect(flat(command)).toContain(`for ${hooks} (repeatable)`);
  });
});
