import { BoardChores } from '../../apps/board/chores/boardChores.ts';
import type { RoundOutcome } from '../../apps/computer/closer/closeRound.ts';
import { SessionCloser } from '../../apps/computer/closer/sessionCloser.ts';
import { systemClock } from '../../runtime/actors/clock.ts';
import { startActorSystem, stopSystem } from '../../runtime/actors/runtime.ts';
import type { TickOptions } from '../commands/tick.ts';
import { openLog } from '../shared/openLog.ts';
import { print } from '../shared/options.ts';

/**
 * `runledger tick`: exactly one round over a computer's open session closes, then exit. It may run
 * beside the daemon on the same log: the claims keep the two off each other's closes.
 */
export async function tick(options: TickOptions): Promise<void> {
  const store = await openLog(options, { mustExist: true });
  const system = startActorSystem({
    onError: () => {
      // a crash of a round's actor fails the round, which tick reports
    },
  });
  const closer = new SessionCloser({
    system,
    store,
    clock: systemClock,
    computer: options.computer,
    driver: options.sessionDriver,
    ...(options.tmuxSocket ? { tmuxSocket: options.tmuxSocket } : {}),
    settings: { tickMs: options.tickS * 1000, quietMs: options.quietS * 1000 },
  });
  try {
    await closer.open();
    const outcomes = await closer.round();
    // The board's half of a round: adoptions, then notices, then the tick (hooks are the daemon's).
    const chores = new BoardChores({ store, clock: systemClock, hooks: {} });
    await chores.start();
    const board = await chores.round();
    await chores.stop();
    print(options, { computer: options.computer, lock: closer.lock, outcomes, board }, () => describe(options.computer, outcomes));
  } finally {
    closer.stop();
    stopSystem(system);
    await store.close();
  }
}

function describe(computer: string, outcomes: readonly RoundOutcome[]): string {
  if (outcomes.length === 0) return `no session of computer ${computer} waits to be closed`;
  const width = Math.max(...outcomes.map((o) => o.sessionId.length));
  return outcomes.map((o) => `${o.sessionId.padEnd(width)}  ${o.outcome.padEnd(8)}  ${o.reason}`).join('\n');
}
