/**
 * The offer monitor (in memory, as the lease monitor): a run left unclaimed with its lane free — its
 * computers skipped it while their streams stayed up, so no reconnect pushes it again — is handed to
 * the board as stale after OFFER_AGAIN_MS, then after twice as long each time: a run that waits for
 * slots costs a few events over hours, not one per round.
 */
import { describe, expect, it } from 'vitest';
import { MAX_STALE_A_ROUND, OFFER_AGAIN_MS, OfferMonitor } from '../../../apps/board/offerMonitor.ts';
import { FakeClock } from '../../../runtime/actors/clock.ts';

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('the offer monitor', () => {
  it('given a run unclaimed with its lane free, then it is found stale after the bound, then after twice as long, and no more once claimed', async () => {
    const clock = new FakeClock();
    const t0 = clock.now();
    let idle = ['r1'];
    const stale: [string, number, number][] = [];
    const monitor = new OfferMonitor(
      clock,
      async () => idle,
      async (runId, since) => void stale.push([runId, since - t0, clock.now() - t0]),
      () => {},
    );
    monitor.start();
    const advance = async (ms: number) => {
      for (let left = ms; left > 0; left -= 1_000) {
        clock.advance(Math.min(1_000, left));
        await settle();
      }
    };
    await advance(OFFER_AGAIN_MS - 5_000);
    expect(stale).toEqual([]);
    await advance(10_000);
    expect(stale.map(([id]) => id)).toEqual(['r1']);
    const first = stale[0]![2];
    await advance(2 * OFFER_AGAIN_MS - 10_000);
    expect(stale).toHaveLength(1);
    await advance(20_000);
    expect(stale).toHaveLength(2);
    expect(stale[1]![2] - first).toBeGreaterThanOrEqual(2 * OFFER_AGAIN_MS);
    idle = [];
    await advance(20 * OFFER_AGAIN_MS);
    expect(stale).toHaveLength(2);
    monitor.stop();
  });

  it('given a stale run that could not be recorded, then the next round tries again, and the failure is told', async () => {
    const clock = new FakeClock();
    const lines: string[] = [];
    let failing = true;
    const stale: string[] = [];
    const monitor = new OfferMonitor(
      clock,
      async () => ['r1'],
      async (runId) => {
        if (failing) throw new Error('SQLITE_FULL');
        stale.push(runId);
      },
      (line) => lines.push(line),
    );
    monitor.start();
    for (let i = 0; i < (OFFER_AGAIN_MS + 20_000) / 1_000; i++) {
      clock.advance(1_000);
      await settle();
    }
    expect(lines[0]).toBe('offer monitor: the stale offer of run r1 could not be recorded (SQLITE_FULL); trying again next round');
    failing = false;
    for (let i = 0; i < 20; i++) {
      clock.advance(1_000);
      await settle();
    }
    expect(stale).toEqual(['r1']);
    monitor.stop();
  });

  it('given many runs found stale at once (a board that restarted under a backlog), then they are handed over a few a round, each within a bounded time, never in one burst', async () => {
    const clock = new FakeClock();
    const t0 = clock.now();
    const runs = Array.from({ length: 10 * MAX_STALE_A_ROUND }, (_, i) => `r${i}`);
    const handed: number[] = [];
    const monitor = new OfferMonitor(
      clock,
      async () => runs,
      async () => void handed.push(clock.now() - t0),
      () => {},
    );
    monitor.start();
    for (let i = 0; i < (OFFER_AGAIN_MS + 120_000) / 1_000; i++) {
      clock.advance(1_000);
      await settle();
      await settle();
    }
    monitor.stop();
    // Each run once (the later offers wait twice as long), spread over rounds of at most MAX_STALE_A_ROUND.
    expect(handed).toHaveLength(runs.length);
    const perInstant = new Map<number, number>();
    for (const at of handed) perInstant.set(at, (perInstant.get(at) ?? 0) + 1);
    expect(Math.max(...perInstant.values())).toBeLessThanOrEqual(MAX_STALE_A_ROUND);
    // The last is handed over within a round per MAX_STALE_A_ROUND runs after the first.
    expect(Math.max(...handed) - Math.min(...handed)).toBeLessThanOrEqual(10 * 5_000);
  });
});
