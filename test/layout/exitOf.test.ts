/**
 * The tests' processes are read to the end of their output before their exit is taken: a `runledger
 * daemon` that exited 2 was once asserted on before its message was read (a loaded machine), and a
 * child writing more than a pipe holds shows it every time.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { exitOf } from '../support/exitOf.ts';

const MIB = 1 << 20;

describe('a test process exits', () => {
  it('given a child that writes a MiB to stderr and exits 2, then by its exit all of it has been read', async () => {
    const child = spawn(process.execPath, ['-e', `process.stderr.write('x'.repeat(${MIB})); process.exitCode = 2`], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let read = 0;
    child.stderr.on('data', (chunk: Buffer) => (read += chunk.length));
    const { code } = await exitOf(child);
    expect(code).toBe(2);
    expect(read).toBe(MIB);
  });

  it('given a child that leaves a process holding its output open, then its exit is taken within the grace', async () => {
    const child = spawn('/bin/sh', ['-c', 'sleep 30 & exit 3'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const started = Date.now();
    const { code } = await exitOf(child);
    expect(code).toBe(3);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
