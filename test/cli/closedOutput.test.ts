import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exitOf } from '../support/exitOf.ts';
import { repoRoot } from '../support/processes.ts';

describe('a command whose reader went away', () => {
  it('given stdout closed before it writes (`runledger submit --help | head -0`), then it exits 0 without a stack trace', async () => {
    const child = spawn(process.execPath, [join(repoRoot, 'cli/runledger.js'), 'submit', '--help'], { stdio: ['ignore', 'pipe', 'pipe'] });
    // Closed at once: the process takes a tenth of a second to start, so its one write finds no reader.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const { code } = await exitOf(child);
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });
});
