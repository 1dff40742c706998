/**
 * A push-stream upgrade is a raw socket the board owns from the `upgrade` event on: Node's server no
 * longer listens for its errors. A client that resets the connection (a computer killed, a scanner, a
 * proxy giving up) while the board checks its token or after the refusal must cost that socket only,
 * never the board: an `error` event with no listener is an uncaught exception that ends the process.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ServerProcess } from '../../support/serverProcess.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Sends an upgrade with a token the board refuses; resolves once the first bytes of its answer came. */
function refusedUpgrade(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () =>
      socket.write(
        'GET /v1/computers/c1/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n' +
          'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nAuthorization: Bearer wrong\r\n\r\n',
      ),
    );
    socket.once('data', () => resolve(socket));
    socket.once('error', reject);
  });
}

describe('a push-stream upgrade reset by its client', () => {
  it('given the board refused it and the client resets the connection, then the board goes on serving', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'runledger-upgrade-reset-'));
    dirs.push(dir);
    const board = await ServerProcess.start(['--db', join(dir, 'runledger.db')]);
    for (let i = 0; i < 5; i++) {
      const socket = await refusedUpgrade(board.url).catch((error: unknown) => {
        throw new Error(`upgrade ${i} failed (${String(error)}): the board said\n${board.output}`);
      });
      socket.resetAndDestroy();
    }
    // Each reset reaches the board's socket before this answer (one connection after another, in order).
    for (let i = 0; i < 3; i++) {
      const health = await fetch(`${board.url}/healthz`);
      expect(health.status).toBe(200);
    }
    expect(board.child.exitCode).toBeNull();
    expect(board.output).not.toContain('ECONNRESET');
  });
});
