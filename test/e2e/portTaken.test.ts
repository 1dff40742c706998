/**
 * A daemon whose port is taken: the error names the address and the process exits, nothing else. It
 * once crashed on its way out instead, printing a stack trace: the board's follower of the log outlived
 * the failed start and read the log after the daemon had closed it.
 */
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { runInProcess } from '../support/inProcessCli.ts';
import { tempDir } from '../support/tempStore.ts';
import { runCli } from './support/cluster.ts';

async function occupiedPort(): Promise<number> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return (server.address() as { port: number }).port;
}

describe('runledger daemon on a port that is taken', () => {
  it('given another process listening on the port, then it exits non-zero naming the address, with no stack trace, and leaves a log that opens again', async () => {
    const port = await occupiedPort();
    const db = join(tempDir(), 'taken.db');

    // Long enough for the log's poll (250 ms) to come round after the failed start.
    const run = await runCli(['daemon', '--db', db, '--port', String(port), '--exec', 'true'], 15_000);

    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain(`runledger: port ${port} on 127.0.0.1 is taken (EADDRINUSE`);
    expect(run.stderr).toContain('--port P (--port 0 takes a free one)');
    expect(run.status).toBe(2);
    expect(run.stderr).not.toMatch(/^\s+at /m);
    expect(run.stderr).not.toContain('database connection is not open');
    // The log opens again: read in this process, its exit status as a shell sees it is not what this proves.
    const again = await runInProcess(['audit', '--db', db]);
    expect(again.status).toBe(0);
  });
});
