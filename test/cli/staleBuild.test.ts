/**
 * A checkout whose sources changed since dist/ was built (an edit, a `git pull`) must not run the old
 * code without a word: the bin looks at modification times, and the build rebuilds what changed.
 */
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../support/processes.ts';

/** A copy of the checkout's sources (not its dist/), sharing its node_modules. */
function checkoutCopy(): string {
  const folder = mkdtempSync(join(tmpdir(), 'runledger-checkout-'));
  const folders = (JSON.parse(readFileSync(join(repoRoot, 'tsconfig.build.json'), 'utf8')) as { include: string[] }).include;
  for (const entry of [...folders, 'build.ts', 'tsconfig.json', 'tsconfig.build.json', 'package.json'])
    cpSync(join(repoRoot, entry), join(folder, entry), { recursive: true });
  symlinkSync(join(repoRoot, 'node_modules'), join(folder, 'node_modules'));
  return folder;
}

const version = (folder: string) =>
  spawnSync(process.execPath, [join(folder, 'cli/runledger.js'), '--version'], { cwd: folder, encoding: 'utf8', timeout: 60_000 });

// One copy for both tests, in this order (a build of the whole tree costs seconds of CPU): commands
// started at once on it, never built, then the same copy unchanged and then changed.
describe('runledger in a checkout', () => {
  let folder: string;
  beforeAll(() => {
    folder = checkoutCopy();
  });
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('given commands started at once on a stale checkout, then each runs: one builds, the others wait for it', async () => {
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
    for (const result of results) expect(result).toMatchObject({ status: 0, stdout: '0.1.0\n' });
    expect(results.filter((r) => r.stderr.includes('built dist/')).length).toBe(1);
    expect(results.find((r) => r.stderr.includes('built dist/'))!.stderr).toMatch(/^runledger: built dist\/ in [\d.]+ s\n$/);
  });

  it('given sources changed since the build, then it rebuilds (saying so) and runs the new code; unchanged, it just runs', () => {
    expect(version(folder)).toMatchObject({ status: 0, stdout: '0.1.0\n', stderr: '' });

    const packageJson = join(folder, 'package.json');
    writeFileSync(packageJson, readFileSync(packageJson, 'utf8').replace('"version": "0.1.0"', '"version": "0.1.1"'));
    expect(version(folder)).toMatchObject({ status: 0, stdout: '0.1.1\n', stderr: expect.stringMatching(/^runledger: built dist\/ in/) });
    expect(version(folder)).toMatchObject({ status: 0, stdout: '0.1.1\n', stderr: '' });
  });
});
