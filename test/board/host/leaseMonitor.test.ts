import { describe, expect, it } from 'vitest';
import type { OpenClaim } from '../../../actors/board/boardQueries.ts';
import { LeaseMonitor } from '../../../apps/board/leaseMonitor.ts';
import { SoleBoard } from '../../../apps/board/peers/boardPeers.ts';
import { FakeClock } from '../../../runtime/actors/clock.ts';

const LEASE_MS = 600;
const ROUND_MS = 100; // a sixth of the lease
/** A round's promises (the read, the lapses) settle before the clock moves on. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A monitor on a fake clock whose reads and lapses the test steers; what it logs is kept. */
function monitorOf(read: () => Promise<OpenClaim[]>, lapse: (runId: string) => Promise<void> = async () => {}) {
  const clock = new FakeClock();
  const lines: string[] = [];
  const lapsed: string[] = [];
  const monitor = new LeaseMonitor(
    clock,
    LEASE_MS,
    new SoleBoard(),
    read,
    async (runId) => {
      lapsed.push(runId);
      await lapse(runId);
    },
    (line) => lines.push(line),
  );
  const round = async () => {
    clock.advance(ROUND_MS);
    await settle();
  };
  return { clock, monitor, lines, lapsed, round };
}

describe('the lease monitor tells a round it could not do, and goes on', () => {
  it('a failing read of the open claims is one named line, and the next round reads again and reaps', async () => {
    let failing = true;
    let open: OpenClaim[] = [{ runId: 'r1', computerId: 'c1', claimedAt: 0 }];
    const { monitor, lines, lapsed, round } = monitorOf(
      async () => {
        if (failing) throw new Error('disk I/O error');
        return open;
      },
      // The board closes a lapsed claim.
      async () => {
        open = [];
      },
    );
    monitor.start();
    await round();
    expect(lines).toEqual(['lease monitor: the open claims could not be read (disk I/O error); trying again next round']);
    failing = false;
    for (let i = 0; i < LEASE_MS / ROUND_MS + 1; i++) await round();
    monitor.stop();
    expect(lapsed).toEqual(['r1']);
    expect(lines).toHaveLength(1);
  });

  it('a failing read forgets no heartbeat: a run that keeps beating is not reaped after it', async () => {
    let failing = false;
    const claim: OpenClaim = { runId: 'r1', computerId: 'c1', claimedAt: 0 };
    const { monitor, lapsed, round } = monitorOf(async () => {
      if (failing) throw new Error('disk I/O error');
      return [claim];
    });
    monitor.start();
    // Ten leases with a heartbeat every half lease (three rounds); one read fails between two beats.
    for (let i = 0; i < (10 * LEASE_MS) / ROUND_MS; i++) {
      failing = i === 31;
      if (i % 3 === 0) monitor.touch('r1');
      await round();
    }
    monitor.stop();
    expect(lapsed).toEqual([]);
  });

  it('a lapse that could not be recorded is one named line, and the run is reaped again next round', async () => {
    let failing = true;
    const { monitor, lines, lapsed, round } = monitorOf(
      async () => [{ runId: 'r1', computerId: 'c1', claimedAt: 0 }],
      async () => {
        if (failing) throw new Error('the log is full');
      },
    );
    monitor.start();
    for (let i = 0; i < LEASE_MS / ROUND_MS + 1; i++) await round();
    expect(lapsed).toEqual(['r1']);
    expect(lines).toEqual(['lease monitor: the lapse of run r1 could not be recorded (the log is full); trying again next round']);
    failing = false;
    await round();
    monitor.stop();
    expect(lapsed).toEqual(['r1', 'r1']);
  });

  it('a lapse retried after a failed record names the same last heartbeat, not the claim time', async () => {
    const clock = new FakeClock();
    const t0 = clock.now();
    const seen: number[] = [];
    let failing = true;
    const monitor = new LeaseMonitor(
      clock,
      LEASE_MS,
      new SoleBoard(),
      async () => [{ runId: 'r1', computerId: 'c1', claimedAt: 0 }],
      async (_runId, last) => {
        seen.push(last - t0);
        if (failing) throw new Error('the disk is full');
      },
      () => {},
    );
    const round = async () => {
      clock.advance(ROUND_MS);
      await settle();
    };
    monitor.start();
    for (let i = 0; i < 3; i++) await round();
    monitor.touch('r1');
    for (let i = 0; i < 7; i++) await round();
    failing = false;
    await round();
    monitor.stop();
    expect(seen).toEqual([300, 300]);
  });
});

describe('the lease monitor of a board that holds the chores again', () => {
  it('given a lease lost for longer than a run lease (the shared heartbeats unwritten meanwhile), when it holds again, then each claim gets a fresh lease from then', async () => {
    const clock = new FakeClock();
    const t0 = clock.now();
    let holds = true;
    const lapsed: [string, number][] = [];
    // The shared table as a database that refused writes left it: the last beat it took is the claim's.
    const peers = { holdsChores: () => holds, heard: () => undefined, lastHeard: async () => new Map([['r1', t0]]) };
    const monitor = new LeaseMonitor(
      clock,
      LEASE_MS,
      peers,
      async () => [{ runId: 'r1', computerId: 'c1', claimedAt: t0 }],
      async (runId, last) => void lapsed.push([runId, last - t0]),
      () => {},
    );
    const round = async () => {
      clock.advance(ROUND_MS);
      await settle();
    };
    monitor.start();
    holds = false;
    for (let i = 0; i < (2 * LEASE_MS) / ROUND_MS; i++) await round();
    holds = true;
    // Within a lease of holding again, heartbeats written since can still reach the table: nothing is reaped.
    for (let i = 0; i < LEASE_MS / ROUND_MS - 1; i++) await round();
    expect(lapsed).toEqual([]);
    for (let i = 0; i < 3; i++) await round();
    monitor.stop();
    expect(lapsed[0]).toEqual(['r1', 2 * LEASE_MS + ROUND_MS]);
  });
});

describe('the lease monitor measures silence on its own clock (docs/architecture.md#time)', () => {
  /** A monitor whose heartbeats are read from `beats` (as a shared table gives them, another clock's stamps). */
  function watching(beats: Map<string, number>) {
    const clock = new FakeClock();
    const lapsed: string[] = [];
    const lines: string[] = [];
    const peers = { holdsChores: () => true, heard: () => undefined, lastHeard: async () => new Map(beats) };
    const claimedAt = clock.now();
    const monitor = new LeaseMonitor(
      clock,
      LEASE_MS,
      peers,
      // The board closes a lapsed claim.
      async () => (lapsed.length > 0 ? [] : [{ runId: 'r1', computerId: 'c1', claimedAt }]),
      async (runId) => void lapsed.push(runId),
      (line) => lines.push(line),
    );
    const round = async () => {
      clock.advance(ROUND_MS);
      await settle();
    };
    return { clock, monitor, lapsed, lines, round };
  }

  it('heartbeats stamped an hour behind its clock (another board’s, stepped back) keep a run alive; their end reaps it a lease later', async () => {
    const beats = new Map<string, number>();
    const { clock, monitor, lapsed, round } = watching(beats);
    monitor.start();
    for (let i = 0; i < (5 * LEASE_MS) / ROUND_MS; i++) {
      if (i % 3 === 0) beats.set('r1', clock.now() - 3_600_000);
      await round();
    }
    expect(lapsed).toEqual([]);
    for (let i = 0; i < LEASE_MS / ROUND_MS + 2; i++) await round();
    monitor.stop();
    expect(lapsed).toEqual(['r1']);
  });

  it('a silent run’s last beat, read through a clock offset measured again each round (a few ms apart), is reaped a lease later', async () => {
    const beats = new Map([['r1', 1_000]]);
    const { monitor, lapsed, round } = watching(beats);
    monitor.start();
    for (let i = 0; i < LEASE_MS / ROUND_MS + 2; i++) {
      beats.set('r1', 1_000 + (i % 2 === 0 ? 7 : -5));
      await round();
    }
    monitor.stop();
    expect(lapsed).toEqual(['r1']);
  });

  it('heartbeats stamped an hour ahead do not keep a silent run alive', async () => {
    const beats = new Map([['r1', Date.UTC(2026, 0, 1) + 3_600_000]]);
    const { monitor, lapsed, round } = watching(beats);
    monitor.start();
    for (let i = 0; i < LEASE_MS / ROUND_MS + 2; i++) await round();
    monitor.stop();
    expect(lapsed).toEqual(['r1']);
  });

  it('a round that fires far later than asked (this process frozen or asleep) reaps nothing: the time away counts in no lease', async () => {
    const { clock, monitor, lapsed, lines, round } = watching(new Map([['r1', 1]]));
    monitor.start();
    await round();
    // Frozen for ten leases: its timer fires once, on waking.
    clock.jump(10 * LEASE_MS);
    await settle();
    expect(lapsed).toEqual([]);
    expect(lines).toEqual(['lease monitor: this process was away for 6 s (frozen or asleep): not counted in any lease']);
    // Still silent a lease after waking: reaped then.
    for (let i = 0; i < LEASE_MS / ROUND_MS + 1; i++) await round();
    monitor.stop();
    expect(lapsed).toEqual(['r1']);
  });
});
