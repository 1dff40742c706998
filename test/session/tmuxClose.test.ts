import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { tmuxDriver } from '../../adapters/tmux/tmuxDriver.ts';
import type { RoundOutcome } from '../../apps/computer/closer/closeRound.ts';
import { type SessionStop, wordSessionReason } from '../../events/sessionReasons.ts';
import { systemClock } from '../../runtime/actors/clock.ts';
import { openTempStore, tempDir } from '../support/tempStore.ts';
import { COMPUTER, closerOn, intend, ofType } from './sessionSupport.ts';

const AGENT = fileURLToPath(new URL('../fixtures/session/recordingAgent.mjs', import.meta.url));

/** A tmux server of the test's own (`-L`): the user's default server is never touched. */
function privateTmux() {
  const socket = `runledger-test-${randomBytes(6).toString('hex')}`;
  const tmux = (...args: string[]) => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' }).trim();
  onTestFinished(() => {
    spawnSync('tmux', ['-L', socket, 'kill-server']);
  });
  /** A pane running `command`, tagged as the pane of `sessionId` with its record at `record`. */
  const pane = (sessionId: string, command: string, record?: string) => {
    const id = tmux('new-session', '-d', '-P', '-F', '#{pane_id}', '-x', '100', '-y', '20', command);
    tmux('set-option', '-p', '-t', id, '@runledger-session', sessionId);
    if (record) tmux('set-option', '-p', '-t', id, '@runledger-record', record);
    return id;
  };
  const panes = () => {
    const listed = spawnSync('tmux', ['-L', socket, 'list-panes', '-a', '-F', '#{pane_id}'], { encoding: 'utf8' });
    return listed.status === 0 ? listed.stdout.split('\n').filter(Boolean) : [];
  };
  return { socket, tmux, pane, panes };
}

/** Rounds every `tickMs` until `done`, bounded; each round's outcomes with the time it ended. */
async function roundsUntil(round: () => Promise<RoundOutcome[]>, tickMs: number, done: (o: RoundOutcome) => boolean, ms: number) {
  const seen: { at: number; outcome: RoundOutcome }[] = [];
  const deadline = Date.now() + ms;
  for (;;) {
    for (const outcome of await round()) seen.push({ at: Date.now(), outcome });
    if (seen.some((s) => done(s.outcome))) return seen;
    if (Date.now() > deadline) throw new Error(`not done within ${ms} ms: ${seen.map((s) => `${s.outcome.outcome} ${s.outcome.reason}`).join('\n')}`);
    await new Promise((resolve) => setTimeout(resolve, tickMs));
  }
}

describe('closing a session that lives in a real tmux pane', () => {
  beforeAll(() => {
    if (spawnSync('tmux', ['-V']).status !== 0) throw new Error('tmux is not installed: these tests need it (.ci/run installs the Debian package)');
  });

  it('given an agent writing its record, then the close waits while it writes and goes ahead after quiet; the pane is gone after', async () => {
    const tmux = privateTmux();
    const record = join(tempDir(), 'S1.jsonl');
    const id = tmux.pane('S1', `node ${AGENT} ${record} 2000 200`, record);
    const store = await openTempStore();
    const quietMs = 1500;
    const closer = closerOn(store, systemClock, { driver: 'tmux', tmuxSocket: tmux.socket, settings: { tickMs: 200, quietMs } });
    await closer.open();
    await intend(closer, 'S1', 'r1');
    expect(tmux.tmux('display', '-p', '-t', id, '#{pane_current_command}')).toBe('node');

    const seen = await roundsUntil(
      () => closer.round(),
      200,
      (o) => o.outcome === 'closed',
      10_000,
    );
    const lastWrite = statSync(record).mtimeMs;
    const deferred = seen.filter((s) => s.outcome.outcome === 'deferred');
    // While it wrote, every reading found a new mark and the watch started again.
    expect(
      deferred.filter((s) => s.at < lastWrite && /its record was written: the watch starts again/.test(s.outcome.reason)).length,
    ).toBeGreaterThanOrEqual(2);
    const closedAt = seen.find((s) => s.outcome.outcome === 'closed')!.at;
    expect(closedAt - lastWrite).toBeGreaterThanOrEqual(quietMs);
    expect(tmux.panes()).not.toContain(id);

    const log = await store.readStream(`${COMPUTER}/session:S1`);
    const kill = ofType(log, 'session.kill.requested');
    expect(kill).toHaveLength(1);
    expect(kill[0]).toMatchObject({
      data: { target: `tmux:${id}`, reason: { code: 'quiet', quietMs: 1_500 } },
    });
    // Watched at least the quiet time; how much longer is the machine's load (a round every 200 ms, late when busy).
    expect(wordSessionReason(kill[0]!.data.reason)).toMatch(/nothing was written to its record in \d+(\.\d)? s watched \(quiet 1\.5 s\)/);
    expect((kill[0]!.data.reason as Extract<SessionStop, { code: 'quiet' }>).watchedMs).toBeGreaterThanOrEqual(1_500);
    expect(ofType(log, 'session.closed')[0]).toMatchObject({
      data: { reason: { code: 'stopped', detail: expect.stringContaining(`pane ${id} killed`) } },
    });
  });

  it('given a pane whose agent publishes its turn, then the close waits through the turn and closes once it reads idle', async () => {
    const tmux = privateTmux();
    const id = tmux.pane('S2', `node ${AGENT} /dev/null 0 1000`);
    tmux.tmux('set-option', '-p', '-t', id, '@runledger-turn', 'working');
    const store = await openTempStore();
    const closer = closerOn(store, systemClock, { driver: 'tmux', tmuxSocket: tmux.socket, settings: { tickMs: 200, quietMs: 1500 } });
    await closer.open();
    await intend(closer, 'S2', 'r2');
    const first = await closer.round();
    expect(first.map((o) => o.outcome)).toEqual(['deferred']);
    expect(first[0]!.reason).toMatch(/in a turn \(working\)/);
    tmux.tmux('set-option', '-p', '-t', id, '@runledger-turn', 'needs_input');
    expect((await closer.round())[0]!.reason).toMatch(/in a turn \(needs_input\)/);
    tmux.tmux('set-option', '-p', '-t', id, '@runledger-turn', 'idle');
    expect((await closer.round()).map((o) => o.outcome)).toEqual(['closed']);
    expect(ofType(await store.readStream(`${COMPUTER}/session:S2`), 'session.closed')).toHaveLength(1);
    expect(tmux.panes()).not.toContain(id);
  });

  it('given a pane that runs no agent any more, or no pane at all, then the close goes ahead without waiting', async () => {
    const tmux = privateTmux();
    const keep = tmux.pane('other', 'sleep 60');
    const id = tmux.pane('S3', 'sleep 60');
    const store = await openTempStore();
    const closer = closerOn(store, systemClock, { driver: 'tmux', tmuxSocket: tmux.socket });
    await closer.open();
    await intend(closer, 'S3', 'r3');
    await intend(closer, 'S4', 'r4');
    const outcomes = await closer.round();
    expect(outcomes.map((o) => `${o.sessionId} ${o.outcome}`)).toEqual(['S3 closed', 'S4 closed']);
    expect(ofType(await store.readStream(`${COMPUTER}/session:S3`), 'session.kill.requested')[0]).toMatchObject({
      data: { reason: { code: 'no.agent', seen: `pane ${id} runs sleep, no agent` } },
    });
    expect(outcomes[1]!.reason).toMatch(/no tmux pane of it is open/);
    expect(tmux.panes()).toEqual([keep]);
    // Reading a pane the server no longer has is no failure either.
    expect(await tmuxDriver({ socket: tmux.socket }).stop(`tmux:${id}`)).toEqual({ ok: true, detail: `pane ${id} was gone already` });
  });
});
