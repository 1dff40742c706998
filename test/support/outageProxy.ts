import { connect, createServer, type Server, type Socket } from 'node:net';
import { onTestFinished } from 'vitest';

/**
 * A TCP hop in front of the test server that can go down (every connection cut, new ones cut at once)
 * and come back: what a store sees of a PostgreSQL restart or a network outage, without stopping the
 * server the other test files share.
 */
export async function outageProxy(target: URL): Promise<{ url(of: string): string; down(): void; up(): void; freeze(): void; refused(): number }> {
  const live = new Set<Socket>();
  let isDown = false;
  // Frozen: the connections stay open and nothing goes through them, either way (a network that drops packets).
  let frozen = false;
  let refused = 0;
  const server: Server = createServer((socket) => {
    if (isDown) {
      refused++;
      socket.destroy();
      return;
    }
    const upstream = connect(Number(target.port), target.hostname);
    for (const s of [socket, upstream]) {
      live.add(s);
      s.on('close', () => live.delete(s));
      s.on('error', () => undefined);
    }
    socket.on('data', (data) => void (frozen || upstream.write(data)));
    upstream.on('data', (data) => void (frozen || socket.write(data)));
    socket.on('close', () => upstream.destroy());
    upstream.on('close', () => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => {
    for (const s of live) s.destroy();
    server.close();
  });
  const port = (server.address() as { port: number }).port;
  return {
    url(of) {
      const through = new URL(of);
      through.host = `127.0.0.1:${port}`;
      return through.toString();
    },
    down() {
      isDown = true;
      for (const s of live) s.destroy();
    },
    up() {
      isDown = false;
    },
    freeze() {
      frozen = true;
    },
    refused: () => refused,
  };
}
