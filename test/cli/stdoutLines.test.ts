import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { builtScript } from '../support/builtScripts.ts';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** Runs a script that uses `stdoutLines` in a node of its own; resolves with its stdout, chunk by chunk. */
function run(body: string): Promise<{ chunks: string[]; code: number | null }> {
  const script = `import { stdoutLines } from ${JSON.stringify(builtScript('cli/shared/stdoutLines.ts'))};\nconst out = stdoutLines();\n${body}`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const chunks: string[] = [];
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => chunks.push(chunk));
  return new Promise((resolve) => child.on('close', (code) => resolve({ chunks, code })));
}

describe("the daemon's stdout", () => {
  it('given many lines told at once, then they go out together, in order', async () => {
    const { chunks, code } = await run(`
      for (let i = 0; i < 200; i++) out.write('line ' + i + '\\n');
      setTimeout(() => process.exit(0), 200);
    `);
    expect(code).toBe(0);
    expect(chunks.join('')).toBe(Array.from({ length: 200 }, (_, i) => `line ${i}\n`).join(''));
    // One write for the lot (a pipe may still hand it over in a few reads), not one a line.
    expect(chunks.length).toBeLessThan(10);
  });

  it('given lines still queued when the process exits, then they are written before it ends', async () => {
    const { chunks } = await run(`
      out.write('told just before the end\\n');
      process.exit(3);
    `);
    expect(chunks.join('')).toBe('told just before the end\n');
  });

  it("given a line flushed after queued ones (the daemon's own), then it comes after them", async () => {
    const { chunks } = await run(`
      out.write('a decision\\n');
      out.write('SIGTERM: shutting down\\n');
      out.flush();
      setTimeout(() => { out.write('late\\n'); out.flush(); setTimeout(() => process.exit(0), 50); }, 5);
    `);
    expect(chunks.join('')).toBe('a decision\nSIGTERM: shutting down\nlate\n');
  });
});
