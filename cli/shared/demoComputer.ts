import { dirname } from 'node:path';
import { type Daemon, type DaemonOptions, localComputerToken, startDaemon } from '../../apps/daemon/startDaemon.ts';
import { systemClock } from '../../runtime/actors/clock.ts';

/** The demo's second computer: it joins the daemon's board over loopback, as any computer would. */
export const DEMO_COMPUTER = 'demo-2';

/**
 * `runledger daemon --demo` runs a second computer beside the daemon's own, so a new user sees what
 * the board does with two: each run is offered to one computer, the lanes spread over both, and a
 * lane's turns go to one computer, in order (docs/rules.md#dispatch). Null (and said why) when it
 * cannot join.
 */
export async function startDemoComputer(daemon: Daemon, options: DaemonOptions, log: (line: string) => void): Promise<Daemon | null> {
  if (!daemon.url || !daemon.board) return null;
  try {
    const token = await localComputerToken(daemon.board, dirname(options.db), DEMO_COMPUTER, systemClock);
    const second = await startDaemon({ ...options, server: daemon.url, computer: DEMO_COMPUTER, token, slots: 1, log, reportToBoard: false });
    log(`demo: a second computer, ${DEMO_COMPUTER}, joined the board`);
    return second;
  } catch (error) {
    log(`demo: the second computer did not start (${(error as Error).message}); the demo goes on with one`);
    return null;
  }
}
