import { describe, expect, it } from 'vitest';
import { liveBoard, ofType, openStream, until } from '../board/host/liveBoard.ts';
import { runInProcess } from '../support/inProcessCli.ts';

describe('runledger computer list', () => {
  it('says which computers are connected since when, and when each of the others was last seen', async () => {
    const board = await liveBoard(['c1', 'c2', 'c3']);
    const c1 = openStream(board, 'c1', 'life-1');
    const c2 = openStream(board, 'c2', 'life-2');
    await Promise.all([c1.opened, c2.opened]);
    c2.ws.close();
    const offline = await until(async () => ofType(await board.log(), 'board.computer.offline')[0], 'c2 offline');
    const online = ofType(await board.log(), 'board.computer.online').find((e) => (e.data as { computerId: string }).computerId === 'c1')!;
    const lastSeen = (offline.data as { lastSeenAt: number }).lastSeenAt;

    const json = await runInProcess(['computer', 'list', '--db', board.path, '--json']);
    expect(json.status, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual([
      { computer_id: 'c1', connected: true, connected_at: new Date(online.at).toISOString(), last_seen_at: null, repos: null },
      { computer_id: 'c2', connected: false, connected_at: null, last_seen_at: new Date(lastSeen).toISOString(), repos: null },
      { computer_id: 'c3', connected: false, connected_at: null, last_seen_at: null, repos: null },
    ]);
    const text = await runInProcess(['computer', 'list', '--db', board.path]);
    expect(text.stdout.trim().split('\n')).toEqual([
      `c1  connected since ${new Date(online.at).toISOString()}`,
      `c2  last seen at ${new Date(lastSeen).toISOString()}`,
      'c3  never connected',
    ]);
  });
});
