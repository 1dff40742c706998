import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The test files share their workers (vitest.config.ts, `isolate: false`): a module a file swaps must be
 * put back before the next file imports it. `vi.mock` swaps it for the whole worker and cannot be
 * undone; `vi.doMock` can, with `vi.doUnmock` and `vi.resetModules` (the copies made under it dropped).
 * A global or an environment variable stubbed is the same story.
 */
function leaksOfSharedWorker(source: string): string[] {
  const leaks: string[] = [];
  if (/\bvi\.mock\(/.test(source))
    leaks.push('vi.mock swaps a module for every later file of the worker: use vi.doMock, then vi.doUnmock and vi.resetModules');
  if (/\bvi\.doMock\(/.test(source) && !(/\bvi\.doUnmock\(/.test(source) && /\bvi\.resetModules\(/.test(source)))
    leaks.push('vi.doMock without vi.doUnmock and vi.resetModules leaves the swapped module to the next file');
  if (/\bvi\.stub(Global|Env)\(/.test(source) && !/\bvi\.unstubAll(Globals|Envs)\(/.test(source))
    leaks.push('a stubbed global or environment variable is left to the next file: vi.unstubAllGlobals / vi.unstubAllEnvs');
  return leaks;
}

describe('test files that share a worker', () => {
  it('given every test file and its helpers, then none leaves a swapped module, global or environment variable behind', () => {
    const found: string[] = [];
    for (const file of readdirSync(`${ROOT}test`, { recursive: true, encoding: 'utf8' })) {
      if (!file.endsWith('.ts') || file.endsWith('sharedWorkers.test.ts')) continue;
      for (const leak of leaksOfSharedWorker(readFileSync(`${ROOT}test/${file}`, 'utf8'))) found.push(`test/${file}: ${leak}`);
    }
    expect(found).toEqual([]);
  });

  it('given a planted vi.mock, or a vi.doMock never undone, then each is named', () => {
    expect(leaksOfSharedWorker("vi.mock('node:os', () => ({}));")).toHaveLength(1);
    expect(leaksOfSharedWorker("vi.doMock('node:os', () => ({}));")).toHaveLength(1);
    expect(leaksOfSharedWorker("vi.doMock('node:os'); vi.doUnmock('node:os'); vi.resetModules();")).toEqual([]);
  });
});
