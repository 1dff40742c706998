/**
 * Two boards on a real PostgreSQL log (sim/pgLog.ts): every append of both boards goes through the
 * PostgresEventStore's commit path (its advisory lock, version and guard checks, the lease rows read
 * under the lock, NOTIFY), the computers and faults simulated as in every world. Its answers come on
 * real I/O, so the world is not played again row for row: its invariants, replay and rebuild are what count.
 */
import { describe, expect, it } from 'vitest';
import { parseFaults } from '../../sim/faults.ts';
import { runWorld } from '../../sim/world.ts';
import { freshPostgresLog } from '../support/postgresLog.ts';

describe('the simulator with two boards on PostgreSQL', () => {
  it('given seed 5 (a computer crashed and twinned, lossy links, a board killed with a hook running), then every invariant holds on the real commit path', async () => {
    const plan = [
      { at: 16_777, kind: 'cut' as const, target: 'c2', forMs: 37_000, amount: 0 },
      { at: 82_251, kind: 'net' as const, target: 'c1', forMs: 38_000, amount: 36 },
      { at: 91_002, kind: 'crash' as const, target: 'c1', forMs: 16_000, amount: 0 },
      { at: 119_900, kind: 'net' as const, target: 'c2', forMs: 53_000, amount: 0 },
      { at: 138_399, kind: 'twin' as const, target: 'c2', forMs: 59_000, amount: 0 },
      { at: 176_136, kind: 'board' as const, target: 'board1', forMs: 11_000, amount: 0 },
    ];
    const postgres = await freshPostgresLog();
    const result = await runWorld({
      seed: 5,
      faults: parseFaults('crash,twin,net,cut,board'),
      size: 'small',
      boards: 2,
      plan,
      keepRuns: [0],
      postgres,
    });
    expect(result.violation).toBeNull();
    // The boards did write there: runs claimed and ended, hooks run.
    expect(result.checks.claimOneHolder).toBeGreaterThan(0);
    expect(result.checks.replayAgrees).toBeGreaterThan(0);
  }, 60_000);
});
