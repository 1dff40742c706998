/**
 * `npm run build` (and `npm ci`, through `prepare`): the JavaScript the `runledger` bin runs, in dist/.
 *
 * esbuild bundles the TypeScript sources (tsconfig.build.json: its `include` is the list of folders
 * the product is made of) into dist/cli/main.js and the chunks it loads (see bundle()), stripping their
 * types as vitest does for the tests, without checking them (`npm run typecheck` does, in CI).
 * Beside them go the sources' other files, the ones the code finds from its own place
 * (`new URL('./static/', import.meta.url)`: the web view's files, the agent launcher, the demo agent),
 * so that dist/ runs alone just as the sources would.
 *
 * The build is made in a folder of its own, then renamed to dist/: a process already running from
 * dist/ never sees half of one. dist/.inputs holds the fingerprint of what it was built from;
 * `ensureBuilt()` (the tests' and benches' global setup) builds only when that changed, so a test
 * never runs stale files and an unchanged tree costs one hash (~50 ms), not a build (~1 s).
 *
 *   node --import tsx build.ts            build
 *   node --import tsx build.ts --if-stale build unless dist/ matches the sources
 */
import { createHash } from 'node:crypto';
import {
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build as esbuild, type Plugin } from 'esbuild';
import { codeOf } from './events/thrown.ts';

const ROOT = dirname(fileURLToPath(import.meta.url));
export const DIST = join(ROOT, 'dist');
const CONFIG = 'tsconfig.build.json';
const FINGERPRINT = '.inputs';
/** The bin itself stays in the sources: it is what runs dist/. */
const LAUNCHER = 'cli/runledger.js';

/** The folders the product is made of: tsconfig.build.json's `include`, the one list of them. */
function productFolders(): string[] {
  const config = JSON.parse(readFileSync(join(ROOT, CONFIG), 'utf8')) as { include: string[] };
  return config.include;
}

function filesUnder(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)))
    .sort();
}

/** A hash of every file the build reads: the product's folders, the configs, package.json and this file. */
export function inputsFingerprint(): string {
  const hash = createHash('sha256');
  const files = [...productFolders().flatMap(filesUnder), 'tsconfig.json', CONFIG, 'package.json', 'build.ts'];
  for (const file of files)
    hash
      .update(`${file}\0`)
      .update(readFileSync(join(ROOT, file)))
      .update('\0');
  return hash.digest('hex');
}

export function isBuilt(fingerprint = inputsFingerprint()): boolean {
  const path = join(DIST, FINGERPRINT);
  return existsSync(path) && readFileSync(path, 'utf8') === fingerprint;
}

/** Builds dist/ from the sources as they are now; throws, leaving dist/ as it was, when esbuild fails. */
export async function build(): Promise<void> {
  const fingerprint = inputsFingerprint();
  const staging = mkdtempSync(join(ROOT, '.dist-'));
  try {
    await bundle(staging);
    for (const file of productFolders().flatMap(filesUnder)) {
      if (file.endsWith('.ts') || file === LAUNCHER) continue;
      mkdirSync(dirname(join(staging, file)), { recursive: true });
      copyFileSync(join(ROOT, file), join(staging, file));
    }
    writeFileSync(join(staging, FINGERPRINT), fingerprint);
    swapIn(staging);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/** Packages the bundle leaves to node_modules: native addons, and nact, whose internal module the runtime loads beside it. */
const UNBUNDLED = ['better-sqlite3', 'nact', 'pg-native', 'bufferutil', 'utf-8-validate'];

/**
 * Packages whose exports send Node to a CommonJS build, which the bundle would carry whole (rxjs:
 * 360 KB, every operator, parsed at each start): their ES module build instead, of which the bundle
 * keeps only what the code imports (40 KB). The same library, the same version.
 */
const ESM_BUILDS = { rxjs: './node_modules/rxjs/dist/esm/index.js' };

/**
 * The bin's code as one entry, dist/cli/main.js, and the chunks its commands load when run (a
 * command loads only what it needs): a start reads a few files instead of about 1,500 modules,
 * which took most of a daemon's start (1.1 s of CPU → 0.5 s).
 *
 * A file that finds its neighbours from its own place (`new URL('./static/', import.meta.url)`)
 * is given that place back (placedAsInDist). dist/.bundle.json names the modules in each output, a
 * source by the file it would be in dist/ (the startup test reads what a command loads).
 */
async function bundle(staging: string): Promise<void> {
  const outdir = join(staging, 'cli');
  const built = await esbuild({
    absWorkingDir: ROOT,
    entryPoints: { main: join(ROOT, 'cli/main.ts') },
    tsconfig: CONFIG,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    outdir,
    chunkNames: 'chunk-[hash]',
    external: UNBUNDLED,
    alias: ESM_BUILDS,
    plugins: [placedAsInDist],
    // The CommonJS packages inside (commander, rxjs, pino, ws) call require() for Node's own modules.
    banner: { js: "import { createRequire as bundleRequire } from 'node:module'; const require = bundleRequire(import.meta.url);" },
    metafile: true,
    logLevel: 'error',
  });
  const modules: Record<string, string[]> = {};
  const inDist = (path: string) => (path.startsWith('node_modules/') ? path : `dist/${path.replace(/\.ts$/, '.js')}`);
  for (const [output, { inputs }] of Object.entries(built.metafile.outputs))
    modules[output.replace(`${relative(ROOT, staging)}/`, 'dist/')] = Object.keys(inputs).map(inDist);
  writeFileSync(join(staging, '.bundle.json'), JSON.stringify(modules));
}

/**
 * Every output lies in dist/cli/: a source's `import.meta.url` becomes where the source would lie in
 * dist/ (web/server.ts: `new URL("../web/server.js", import.meta.url)`), and the files it looks for
 * are copied there (build()).
 */
const placedAsInDist: Plugin = {
  name: 'placed-as-in-dist',
  setup(on) {
    on.onLoad({ filter: /\.ts$/ }, (file) => {
      const source = readFileSync(file.path, 'utf8');
      if (!source.includes('import.meta.url')) return undefined;
      const place = relative(join(ROOT, 'cli'), file.path).replace(/\.ts$/, '.js');
      return { contents: source.replaceAll('import.meta.url', `new URL(${JSON.stringify(place)}, import.meta.url).href`), loader: 'ts' };
    });
  },
};

/** dist/ becomes `staging` by renames (the old one is removed after), so it is never half there. */
function swapIn(staging: string): void {
  const old = `${staging}-old`;
  if (existsSync(DIST)) renameSync(DIST, old);
  renameSync(staging, DIST);
  rmSync(old, { recursive: true, force: true });
}

/** Builds unless dist/ was built from the sources as they are; true when it built. */
export async function ensureBuilt(): Promise<boolean> {
  if (isBuilt()) {
    // Up to date after all (a file touched, not changed): mark it so, so the bin's quick look at
    // modification times (cli/runledger.js) does not send it here again.
    const now = new Date();
    utimesSync(join(DIST, FINGERPRINT), now, now);
    return false;
  }
  // One build at a time: two commands started at once on a stale checkout would both swap dist/ in.
  // Whoever waited finds it built by the other.
  return underBuildLock(async () => {
    if (isBuilt()) return false;
    await build();
    return true;
  });
}

const BUILD_LOCK = join(ROOT, '.build.lock');
const LOCK_WAIT_MS = 120_000;

/** Runs `work` holding the build lock (a file naming its pid); a lock whose process is gone is taken over. */
async function underBuildLock<T>(work: () => Promise<T>): Promise<T> {
  const giveUpAt = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      const fd = openSync(BUILD_LOCK, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      break;
    } catch (error) {
      if (codeOf(error) !== 'EEXIST') throw error;
      if (!holderAlive()) {
        rmSync(BUILD_LOCK, { force: true });
        continue;
      }
      if (Date.now() > giveUpAt) throw new Error(`another build (pid in ${BUILD_LOCK}) has run for over ${LOCK_WAIT_MS / 1000} s`);
      await sleep(50);
    }
  }
  try {
    return await work();
  } finally {
    rmSync(BUILD_LOCK, { force: true });
  }
}

function holderAlive(): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(BUILD_LOCK, 'utf8'));
  } catch {
    // Gone between our open and this read: the holder finished; try again.
    return true;
  }
  // Created but not yet holding its pid: alive for a moment; empty for longer, its creator died there.
  if (!Number.isInteger(pid) || pid <= 0) return Date.now() - (statSync(BUILD_LOCK, { throwIfNoEntry: false })?.mtimeMs ?? 0) < 2_000;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return codeOf(error) === 'EPERM';
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const started = performance.now();
  let built = true;
  if (process.argv.includes('--if-stale')) built = await ensureBuilt();
  else await underBuildLock(build);
  if (built) process.stderr.write(`runledger: built dist/ in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
}
