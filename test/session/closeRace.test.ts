import { describe, expect, it } from 'vitest';
import type { SessionCloser } from '../../apps/computer/closer/sessionCloser.ts';
import { deciders } from '../../replay/deciders.ts';
import { replayLog } from '../../replay/replayLog.ts';
import { systemClock } from '../../runtime/actors/clock.ts';
import { startChild } from '../support/processes.ts';
import { openTempStore, tempDbPath } from '../support/tempStore.ts';
import { agentGroup, COMPUTER, closerOn, groupAlive, intend, liveSiblingLock, ofType } from './sessionSupport.ts';

/** Rounds back to back until `end`. */
async function roundsUntil(closer: SessionCloser, end: number): Promise<number> {
  let rounds = 0;
  for (; Date.now() < end; rounds++) {
    await closer.round();
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return rounds;
}

describe('three processes racing close rounds on one log file', () => {
  it('given many sessions with live processes, then every close is claimed, killed and confirmed exactly once', async () => {
    const path = tempDbPath();
    const [a, b] = [await openTempStore(path), await openTempStore(path)];
    const sibling = liveSiblingLock();
    const closers = [closerOn(a, systemClock, { killGraceMs: 2_000 }), closerOn(b, systemClock, { killGraceMs: 2_000, lock: sibling.lock })];
    const sessions = Array.from({ length: 40 }, (_, i) => `S${i}`);
    const groups = new Map<string, number>();
    for (const closer of closers) await closer.open();
    const child = startChild('session/racer.ts', [path, COMPUTER, '3000']);
    await child.waitForLine((l) => l === 'ready');

    // Closes open all through the race, one every 50 ms, each with a live process group to stop.
    const end = Date.now() + 3000;
    const intents = (async () => {
      for (const s of sessions) {
        const pid = agentGroup();
        groups.set(s, pid);
        await intend(closers[0]!, s, `r-${s}`, { pid });
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    const rounds = await Promise.all(closers.map((c) => roundsUntil(c, end)));
    await intents;
    const exit = await child.waitForExit();
    expect(exit, child.errors()).toEqual({ code: 0, signal: null });
    const racer = JSON.parse(child.output().at(-1)!) as { rounds: number; lock: string };
    expect(Math.min(...rounds, racer.rounds)).toBeGreaterThan(3);
    // Whatever a process decided and left in the outbox is taken by the next round.
    await closers[0]!.round();

    const log = await a.readAll(0, 100_000);
    const performed = ofType(log, 'outbox.performed').map((e) => e.data.effect);
    const claimers = new Set<string>();
    for (const s of sessions) {
      const own = log.filter((e) => e.stream === `${COMPUTER}/session:${s}`);
      const kills = ofType(own, 'session.kill.requested');
      expect(kills, s).toHaveLength(1);
      expect(
        performed.filter((seq) => seq === kills[0]!.seq),
        s,
      ).toHaveLength(1);
      expect(ofType(own, 'session.closed'), s).toHaveLength(1);
      expect(ofType(own, 'session.close.incident'), s).toHaveLength(0);
      expect(groupAlive(groups.get(s)!), s).toBe(false);
      for (const claim of ofType(own, 'session.close.claimed')) claimers.add(claim.data.lock);
    }
    expect(ofType(log, 'outbox.interrupted')).toHaveLength(0);
    // The race was real: closes were claimed by more than one process.
    expect(claimers.size).toBeGreaterThan(1);
    expect(await replayLog(a, deciders)).toMatchObject({ ok: true });
  });
});
