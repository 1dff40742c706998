/**
 * A checkout whose sources changed since dist/ was built (an edit, a `git pull`) must not run the old
 * code without a word: the bin looks at modification times, and the build rebuilds what changed.
 */
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../support/processes.ts';

/** A copy of the checkout: its sources and its dist/ as built from them, sharing its node_modules. */
function checkoutCopy(): string {
  const folder = mkdtempSync(join(tmpdir(), 'runledger-checkout-'));
  const folders = (JSON.parse(readFileSync(join(repoRoot, 'tsconfig.build.json'), 'utf8')) as { include: string[] }).include;
  for (const entry of [...folders, 'build.ts', 'tsconfig.json', 'tsconfig.build.json', 'package.json'])
    cpSync(join(repoRoot, entry), join(folder, entry), { recursive: true });
  // Copied after the sources, so newer than every one of them: built from them, as far as the bin can see.
  cpSync(join(repoRoot, 'dist'), join(folder, 'dist'), { recursive: true });
  symlinkSync(join(repoRoot, 'node_modules'), join(folder, 'node_modules'));
  return folder;
}

const version = (folder: string) =>
  spawnSync(process.execPath, [join(folder, 'cli/runledger.js'), '--version'], { cwd: folder, encoding: 'utf8', timeout: 60_000 });

/** The edit of a source: the package's version, which `--version` prints from the build. */
function bumpVersion(folder: string): void {
  const packageJson = join(folder, 'package.json');
  writeFileSync(packageJson, readFileSync(packageJson, 'utf8').replace('"version": "0.1.0"', '"version": "0.1.1"'));
}

// One copy for both tests, in this order, and one build in all (a build of the whole tree costs
// seconds of CPU): the copy edited, commands started at once on it; then the copy as they left it.
describe('runledger in a checkout', () => {
  let folder: string;
  beforeAll(() => {
    folder = checkoutCopy();
  });
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('given a source changed since the build and commands started at once, then one rebuilds (saying so), the others wait for it, and all run the new code', async () => {
    expect(version(folder)).toMatchObject({ status: 0, stdout: '0.1.0\n', stderr: '' });
    bumpVersion(folder);
    const started = Array.from(
      { length: 4 },
      () =>
        new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
          const child = spawn(process.execPath, [join(folder, 'cli/runledger.js'), '--version'], { cwd: folder });
          let stdout = '';
          let stderr = '';
          child.stdout.on('data', (chunk) => {
            stdout += chunk;
          });
          child.stderr.on('data', (chunk) => {
            stderr += chunk;
          });
          child.on('close', (status) => resolve({ status, stdout, stderr }));
        }),
    );
    const results = await Promise.all(started);
    for (const result of results) expect(result).toMatchObject({ status: 0, stdout: '0.1.1\n' });
    expect(results.filter((r) => r.stderr.includes('built dist/')).length).toBe(1);
    expect(results.find((r) => r.stderr.includes('built dist/'))!.stderr).toMatch(/^runledger: built dist\/ in [\d.]+ s\n$/);
  });

  it('given sources unchanged since the build, or touched without a change (a checkout of the same commit), then it just runs, without a word', () => {
    expect(version(folder)).toMatchObject({ status: 0, stdout: '0.1.1\n', stderr: '' });
    const now = new Date(Date.now() + 1_000);
    utimesSync(join(folder, 'package.json'), now, now);
    expect(version(folder)).toMatchObject({ status: 0, stdout: '0.1.1\n', stderr: '' });
    expect(version(folder)).toMatchObject({ status: 0, stdout: '0.1.1\n', stderr: '' });
  });
});
