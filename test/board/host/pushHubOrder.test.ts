import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import WebSocket from 'ws';
import { PushHub } from '../../../adapters/push/pushHub.ts';
import { systemClock } from '../../../runtime/actors/clock.ts';
import { until } from './liveBoard.ts';

/** A hub behind a real HTTP server on 127.0.0.1, its inputs stubbed: each computer id's inputs are watched. */
async function hubWithStubs(disconnectedHeld: Promise<void>) {
  const calls: string[] = [];
  const lines: string[] = [];
  const hub = new PushHub(
    {
      connected: async (id) => {
        calls.push(`connected ${id}`);
        return true;
      },
      disconnected: async (id) => {
        calls.push(`disconnected ${id} begins`);
        // Still being retried against a log that cannot be written.
        await disconnectedHeld;
        calls.push(`disconnected ${id} recorded`);
      },
      declined: async () => {},
      refused: () => {},
    },
    systemClock,
    (line) => lines.push(line),
  );
  const server = createServer();
  server.on('upgrade', (request, socket, head) => hub.accept(request, socket, head, 'c1', request.headers['runledger-incarnation'] as string));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => {
    hub.close();
    server.close();
  });
  const open = async (incarnation: string) => {
    const ws = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}/`, { headers: { 'runledger-incarnation': incarnation } });
    ws.on('error', () => {});
    onTestFinished(() => ws.terminate());
    await new Promise((resolve) => ws.once('open', resolve));
    return ws;
  };
  return { calls, lines, open };
}

describe('the push hub records each computer id’s inputs in order', () => {
  it('a reconnect’s connected waits for the disconnect before it to be recorded, so a disconnect retried through an outage cannot mark a live computer offline', async () => {
    let release!: () => void;
    const { calls, open } = await hubWithStubs(new Promise<void>((resolve) => (release = resolve)));
    const first = await open('life-a');
    await until(() => calls.includes('connected c1'), 'the first connect');
    first.close();
    await until(() => calls.includes('disconnected c1 begins'), 'the disconnect under way');
    await open('life-a');
    // The new socket is live (its upgrade answered) while the disconnect is still being retried.
    release();
    await until(() => calls.filter((c) => c === 'connected c1').length === 2, 'the reconnect recorded');
    expect(calls).toEqual(['connected c1', 'disconnected c1 begins', 'disconnected c1 recorded', 'connected c1']);
  });
});

describe('the push hub tells what it could not record, and goes on', () => {
  it('a disconnect the board could not record is one line naming the computer, and the computer connects again', async () => {
    const closed = Promise.reject(new Error('the log is closed'));
    // Handled by the hub once the disconnect awaits it; this only keeps it from counting as unhandled before.
    closed.catch(() => {});
    const { calls, lines, open } = await hubWithStubs(closed);
    const first = await open('life-a');
    await until(() => calls.includes('connected c1'), 'the first connect');
    first.close();
    await until(() => lines.length > 0, 'the line');
    expect(lines).toEqual(['push hub: the disconnect of computer c1 could not be recorded (the log is closed); going on without it']);
    await open('life-a');
    await until(() => calls.filter((c) => c === 'connected c1').length === 2, 'the reconnect recorded');
  });
});
