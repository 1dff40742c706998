import { connect } from 'node:net';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { WINDOW } from '../../../actors/board/offerPolicy.ts';
import { PING_MS } from '../../../adapters/push/pushHub.ts';
import { FakeClock } from '../../../runtime/actors/clock.ts';
import { liveBoard, ofType, openStream, until } from './liveBoard.ts';

/** The push stream of docs/rules.md#wire-and-cli against a real board on 127.0.0.1: real WebSocket clients. */
describe('the push stream: one per computer id', () => {
  it('a second connection of a computer while the first is live is closed 4409 computer_connected_elsewhere, and the first keeps its stream', async () => {
    const board = await liveBoard(['c1']);
    const first = openStream(board, 'c1', 'life-a');
    await first.opened;
    await until(async () => ofType(await board.log(), 'board.computer.online').length === 1, 'c1 online');
    const twin = openStream(board, 'c1', 'life-b');
    expect(await twin.closed).toEqual({ code: 4409, reason: 'computer_connected_elsewhere' });
    const older = openStream(board, 'c1');
    expect(await older.closed).toEqual({ code: 4409, reason: 'computer_connected_elsewhere' });
    // The first still gets its frames, and no stream replaced another.
    const runId = await board.submit('A');
    await until(() => first.frames.some((f) => f.data.run_id === runId), 'the frame on the first stream');
    const log = await board.log();
    expect(ofType(log, 'board.computer.online')).toHaveLength(1);
    expect(ofType(log, 'board.computer.offline')).toHaveLength(0);
    expect(first.ws.readyState).toBe(first.ws.OPEN);
  });

  it('a connection with the same incarnation as the live one replaces it (a reconnect of the same life whose old socket is half-open)', async () => {
    const board = await liveBoard(['c1']);
    const old = openStream(board, 'c1', 'life-a');
    await old.opened;
    const runId = await board.submit('A');
    await until(() => old.frames.length === 1, 'the frame on the old stream');
    const fresh = openStream(board, 'c1', 'life-a');
    await fresh.opened;
    expect((await old.closed).code).not.toBe(4409);
    // It is pushed the unclaimed run again, and c1 stays connected.
    await until(() => fresh.frames.some((f) => f.data.run_id === runId), 'the frame on the new stream');
    await until(async () => ofType(await board.log(), 'board.computer.online').length === 2, 'the second online');
    expect(await board.server.board.actor.read((s) => [...s.connected])).toEqual(['c1']);
  });

  it('a socket that misses a pong is terminated and its computer disconnected, naming when it was last seen; then its id may connect again', async () => {
    const clock = new FakeClock();
    const board = await liveBoard(['c1'], { clock });
    // A raw upgrade that never reads again: the machine behind it vanished.
    const url = new URL(board.url);
    const socket = connect(Number(url.port), url.hostname);
    socket.on('error', () => {});
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(
      'GET /v1/computers/c1/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
        `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer ${board.tokens.c1}\r\n\r\n`,
    );
    await until(async () => ofType(await board.log(), 'board.computer.online').length === 1, 'the silent computer online');
    // Two pings unanswered, and the third round finds it gone.
    for (let round = 0; round < 3; round++) clock.advance(PING_MS);
    const offline = await until(async () => ofType(await board.log(), 'board.computer.offline')[0], 'the silent computer taken offline', 5_000);
    expect(offline.data).toMatchObject({ computerId: 'c1' });
    const online = ofType(await board.log(), 'board.computer.online')[0]!;
    expect((offline.data as { lastSeenAt: number }).lastSeenAt).toBeGreaterThanOrEqual(online.at);
    socket.destroy();
    const next = openStream(board, 'c1', 'life-b');
    let pings = 0;
    next.ws.on('ping', () => pings++);
    await next.opened;
    // A live client answers pings: past several rounds, it stays.
    for (let round = 1; round <= 4; round++) {
      clock.advance(PING_MS);
      await until(() => pings >= round, `ping ${round} to the live client`);
      // The board answers this ping after reading the pong sent before it: then the next round may come.
      await new Promise((resolve) => {
        next.ws.once('pong', resolve);
        next.ws.ping();
      });
    }
    expect(next.ws.readyState).toBe(next.ws.OPEN);
  });

  it('a disconnect retried through a log outage is recorded before the reconnect after it, so the live computer stays online', async () => {
    const clock = new FakeClock();
    let full = false;
    let failed = 0;
    const failWrites = () => {
      if (!full) return null;
      failed++;
      return new Database.SqliteError('database or disk is full', 'SQLITE_FULL');
    };
    const board = await liveBoard(['c1'], { clock, faults: { failWrites } });
    const first = openStream(board, 'c1', 'life-a');
    await first.opened;
    await until(async () => ofType(await board.log(), 'board.computer.online').length === 1, 'c1 online');
    const timers = clock.pendingTimers();
    const retryArmed = (failures: number) =>
      until(() => failed >= failures && clock.pendingTimers() > timers, `the disconnect failed ${failures} times, its retry armed`);
    full = true;
    first.ws.close();
    await first.closed;
    // Its disconnect fails, and fails again at its first retry (100 ms on): the next is 200 ms later.
    await retryArmed(1);
    clock.advance(100);
    await retryArmed(2);
    clock.advance(50);
    // The same life reconnects while its disconnect waits; its connect would retry 100 ms on, first.
    const again = openStream(board, 'c1', 'life-a');
    await again.opened;
    full = false;
    await until(async () => {
      clock.advance(1_000);
      const log = await board.log();
      return ofType(log, 'board.computer.online').length === 2 && ofType(log, 'board.computer.offline').length === 1;
    }, 'the disconnect and the reconnect recorded');
    const log = await board.log();
    const last = log.filter((e) => e.type === 'board.computer.online' || e.type === 'board.computer.offline').at(-1)!;
    expect(last.type).toBe('board.computer.online');
    expect(await board.server.board.actor.read((s) => [...s.connected])).toEqual(['c1']);
    expect(again.ws.readyState).toBe(again.ws.OPEN);
  });

  it('a bad incarnation on the upgrade is refused 400 invalid_incarnation', async () => {
    const board = await liveBoard(['c1']);
    const bad = openStream(board, 'c1', 'not/an id');
    await expect(bad.opened).rejects.toThrow('upgrade answered 400');
  });

  it('the repositories announced on the upgrade are recorded with the connect, its default first; a bad name is refused 400 invalid_repos', async () => {
    const board = await liveBoard(['c1', 'c2', 'c3']);
    for (const bad of ['app, ../lib', 'app, app'])
      await expect(openStream(board, 'c1', 'life-a', { repos: bad }).opened).rejects.toThrow('upgrade answered 400');
    await Promise.all([
      openStream(board, 'c1', 'life-a', { repos: 'lib, app' }).opened,
      openStream(board, 'c2', 'life-b', { repos: '' }).opened,
      openStream(board, 'c3', 'life-c').opened,
    ]);
    const online = await until(async () => {
      const events = ofType(await board.log(), 'board.computer.online');
      return events.length === 3 && events;
    }, 'three online');
    const announced = Object.fromEntries(online.map((e) => [(e.data as { computerId: string }).computerId, (e.data as { repos?: unknown }).repos]));
    expect(announced).toEqual({ c1: { names: ['app', 'lib'], default: 'lib' }, c2: { names: [], default: null }, c3: undefined });
  });
});

describe('the push stream: a reconnect costs O(1) events (docs/rules.md#the-log)', () => {
  it('50 reconnects of a computer with 100 runs queued add at most 3 events each, and each is pushed every queued run', async () => {
    const board = await liveBoard(['c1']);
    // Over as many lanes as a computer's window holds (WINDOW): every one is offered to it.
    for (let i = 0; i < 100; i++) await board.submit(`L${i % WINDOW}`);
    const before = (await board.log()).length;
    for (let i = 0; i < 50; i++) {
      const stream = openStream(board, 'c1', `life-${i}`);
      await until(() => stream.frames.length === 100, `100 frames on reconnect ${i}`);
      stream.ws.close();
      await stream.closed;
      await until(async () => !(await board.server.board.actor.read((s) => s.connected.includes('c1'))), `c1 offline after reconnect ${i}`);
    }
    const added = (await board.log()).length - before;
    // Each cycle: connected, online, disconnected, offline.
    expect(added / 50).toBeLessThanOrEqual(2 * 3);
    expect(added).toBe(200);
  });
});

describe('the push stream: a 503 draining ack (docs/rules.md#computer-behaviour)', () => {
  it('makes the board offer the run to another connected computer at once, and offer the draining one nothing more until it reconnects', async () => {
    const board = await liveBoard(['c1', 'c2']);
    const c1 = openStream(board, 'c1', 'life-1');
    const c2 = openStream(board, 'c2', 'life-2');
    await Promise.all([c1.opened, c2.opened]);
    await until(async () => (await board.server.board.actor.read((s) => s.connected.length)) === 2, 'both online');
    // c1 runs lane A's first turn: its next one goes to c1 alone.
    const a0 = await board.submit('A');
    const claimed = await board.call('POST', `/v1/computers/c1/runs/${a0}/claim`, {
      token: board.tokens.c1,
      body: {},
      headers: { 'runledger-incarnation': 'life-1' },
    });
    expect(claimed.status).toBe(200);
    expect((await board.call('POST', `/v1/runs/${a0}/complete`, { token: claimed.body.run_token, body: { ok: true } })).status).toBe(200);
    const a1 = await board.submit('A');
    const frame = await until(() => c1.frames.find((f) => f.data.run_id === a1), 'a1 on c1');
    expect(c2.frames.some((f) => f.data.run_id === a1)).toBe(false);
    c1.ws.send(JSON.stringify({ ack: frame.id, status: 503, reason: 'draining' }));
    await until(() => c2.frames.find((f) => f.data.run_id === a1), 'a1 re-offered to c2');
    const b1 = await board.submit('B');
    await until(() => c2.frames.find((f) => f.data.run_id === b1), 'b1 on c2');
    expect(c1.frames.some((f) => f.data.run_id === b1)).toBe(false);
    const log = await board.log();
    expect(ofType(log, 'board.offer.declined')).toHaveLength(1);
    expect(ofType(log, 'board.computer.draining')).toHaveLength(1);
    // Other acks are not inputs that change anything: not recorded.
    c2.ws.send(JSON.stringify({ ack: c2.frames[0]!.id, status: 202 }));
    c1.ws.send(JSON.stringify({ ack: frame.id, status: 503, reason: 'draining' }));
    // Each computer's inputs are recorded in order: once its disconnect is, any input of those acks would be.
    c1.ws.close();
    c2.ws.close();
    await until(async () => ofType(await board.log(), 'board.computer.offline').length === 2, 'both offline');
    expect(ofType(await board.log(), 'board.offer.declined')).toHaveLength(1);
  });
});
