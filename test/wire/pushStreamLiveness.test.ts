import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { WebSocketServer } from 'ws';
import { BoardServers } from '../../adapters/http/boardServers.ts';
import { PushStreamClient } from '../../adapters/push/pushStreamClient.ts';
import { FakeClock, systemClock } from '../../runtime/actors/clock.ts';
import { waitFor } from '../e2e/support/cluster.ts';

/** A board's stream end: `answers` false is a frozen board's (the socket open, no pong ever). Counts its connections. */
async function boardEnd(answers: boolean) {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', autoPong: answers });
  let connections = 0;
  wss.on('connection', (ws) => {
    connections++;
    ws.on('error', () => {});
  });
  await new Promise<void>((resolve) => wss.once('listening', resolve));
  onTestFinished(() => {
    for (const ws of wss.clients) ws.terminate();
    return new Promise<void>((resolve) => wss.close(() => resolve()));
  });
  return { url: `http://127.0.0.1:${(wss.address() as AddressInfo).port}`, connections: () => connections };
}

function clientOf(servers: BoardServers, clock = systemClock, livenessMs = 600) {
  const states: string[] = [];
  const client = new PushStreamClient({
    server: servers,
    computer: 'c1',
    token: 't',
    clock,
    livenessMs,
    onFrame: async () => {},
    onState: (state, detail) => states.push(`${state}${detail ? ` ${detail}` : ''}`),
    log: () => {},
    random: () => 0,
  });
  onTestFinished(() => client.stop());
  return { client, states };
}

describe("the computer's side of the push stream checks the board's liveness", () => {
  it('a board that answers no ping (frozen) is left for the next one, and said why', async () => {
    const [frozen, next] = await Promise.all([boardEnd(false), boardEnd(true)]);
    const { client, states } = clientOf(new BoardServers([frozen.url, next.url]));
    client.start();
    await waitFor('the stream on the next board', () => states.includes(`connected to ${next.url}`), 10_000, 20);
    expect(states[0]).toBe(`connected to ${frozen.url}`);
    expect(states[1]).toMatch(new RegExp(`^disconnected the board at ${frozen.url} answered nothing for \\d+ s: taken for gone$`));
  });

  it('a board that answers its pings is kept', async () => {
    const [live, next] = await Promise.all([boardEnd(true), boardEnd(true)]);
    const clock = new FakeClock(systemClock.now());
    const { client, states } = clientOf(new BoardServers([live.url, next.url]), clock, 600);
    client.start();
    await waitFor('the stream', () => client.connected, 5_000, 20);
    // Ten times the liveness, a ping every round (200 ms), each answered before the clock goes on.
    for (let i = 0; i < 30; i++) {
      clock.advance(200);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(states).toEqual([`connected to ${live.url}`]);
    expect(next.connections()).toBe(0);
  });

  it('a check that fires far later than asked (this process was away) gives the board its full time again', async () => {
    const [frozen, next] = await Promise.all([boardEnd(false), boardEnd(true)]);
    const clock = new FakeClock(systemClock.now());
    const { client, states } = clientOf(new BoardServers([frozen.url, next.url]), clock, 600);
    client.start();
    await waitFor('the stream', () => client.connected, 5_000, 20);
    // Asleep for a minute: its first check after is late, and blames nobody.
    clock.jump(60_000);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(states).toEqual([`connected to ${frozen.url}`]);
    // Then the board's silence counts, from the wake-up.
    clock.advance(400);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(states).toEqual([`connected to ${frozen.url}`]);
    clock.advance(400);
    await waitFor('the stream to leave the frozen board', () => states.length > 1, 5_000, 20);
    expect(states[1]).toMatch(/answered nothing for 1 s: taken for gone/);
  });
});

describe('the boards of one log', () => {
  it('a call waiting on a board the stream left is cut; calls to the next are not', () => {
    const servers = new BoardServers(['http://b2', 'http://b1']);
    const left = servers.signalOf('http://b2');
    const next = servers.signalOf('http://b1');
    servers.failed('http://b2');
    expect(left.aborted).toBe(true);
    expect(String(left.reason)).toContain('the board at http://b2 was left for http://b1');
    expect(next.aborted).toBe(false);
    // A call made to it again later gets a live signal.
    expect(servers.signalOf('http://b2').aborted).toBe(false);
  });
});
