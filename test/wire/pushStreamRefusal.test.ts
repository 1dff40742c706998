import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { PushStreamClient } from '../../adapters/push/pushStreamClient.ts';
import { systemClock } from '../../runtime/actors/clock.ts';

/** A server that answers every upgrade with `status` and `body`; counts the upgrades. */
async function answering(status: number, body: string, type = 'text/plain') {
  let upgrades = 0;
  const server = createServer();
  server.on('upgrade', (_request, socket) => {
    upgrades++;
    // The client drops the connection once it has read the answer: a reset of this socket then (seen as
    // an uncaught ECONNRESET beside other tests) is the client leaving, not a failure of the test.
    socket.on('error', () => {});
    socket.end(`HTTP/1.1 ${status} X\r\ncontent-type: ${type}\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, upgrades: () => upgrades };
}

function clientOf(url: string) {
  const onRefused = vi.fn();
  const lines: string[] = [];
  const client = new PushStreamClient({
    server: url,
    computer: 'c1',
    token: 't',
    clock: systemClock,
    onFrame: async () => {},
    onRefused,
    log: (line) => lines.push(line),
    random: () => 0,
  });
  onTestFinished(() => client.stop());
  return { client, onRefused, lines };
}

describe("the push stream's upgrade refused", () => {
  it("by something that is not the board (a proxy's 404 while the board restarts): retried, said once a try", async () => {
    const proxy = await answering(404, '404 page not found');
    const { client, onRefused, lines } = clientOf(proxy.url);
    client.start();
    await vi.waitFor(() => expect(proxy.upgrades()).toBeGreaterThanOrEqual(2), { timeout: 5_000 });
    expect(onRefused).not.toHaveBeenCalled();
    expect(lines[0]).toBe(
      `the stream's upgrade at ${proxy.url} was answered 404 by something that is not a runledger board (a proxy?): trying again`,
    );
  });

  it('by the board itself (401 with its JSON reason): final, told once, no retry', async () => {
    const board = await answering(401, JSON.stringify({ detail: { error: 'unauthorized' } }), 'application/json');
    const { client, onRefused } = clientOf(board.url);
    client.start();
    await vi.waitFor(() => expect(onRefused).toHaveBeenCalledWith(401), { timeout: 5_000 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(board.upgrades()).toBe(1);
  });
});
