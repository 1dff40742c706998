import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';
import type { TestProject } from 'vitest/node';
import { BUILT_SCRIPTS_ENV, SCRIPTS } from './builtScripts.ts';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/**
 * vitest's global setup: the scripts of test/support/builtScripts.ts bundled once for the run (and
 * again before a watch-mode rerun), into a folder of the repository's own, so that the packages they
 * import are found in its node_modules as from the sources. The folder is removed at the end.
 *
 * One build for all of them, split into shared chunks: an inline script importing two of them gets one
 * copy of each module they share (the agent launcher's one shared process, say), as from the sources.
 */
export default async function setup(project: TestProject): Promise<() => void> {
  const folder = mkdtempSync(join(repoRoot, '.built-scripts-'));
  // Readable by all, as the sources are: a test runs one of them as another user (test/store/logFile.test.ts).
  chmodSync(folder, 0o755);
  const remove = () => rmSync(folder, { recursive: true, force: true });
  try {
    await bundle(folder);
  } catch (error) {
    remove();
    throw error;
  }
  process.env[BUILT_SCRIPTS_ENV] = folder;
  project.onTestsRerun(() => bundle(folder));
  return remove;
}

async function bundle(folder: string): Promise<void> {
  await build({
    absWorkingDir: repoRoot,
    entryPoints: SCRIPTS.map((script) => join(repoRoot, script)),
    outbase: repoRoot,
    outdir: folder,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    plugins: [ownPlace],
    logLevel: 'error',
  });
}

/**
 * A module that finds its neighbours from its own place (`new URL('./launcherMain.mjs', import.meta.url)`)
 * finds them where it lies in the sources, not where its bundle does.
 */
const ownPlace: Plugin = {
  name: 'import.meta.url of the source',
  setup(plugin) {
    plugin.onLoad({ filter: /\.ts$/ }, ({ path }) => ({
      contents: readFileSync(path, 'utf8').replaceAll('import.meta.url', JSON.stringify(pathToFileURL(path).href)),
      loader: 'ts',
    }));
  },
};
