import { Command, Option } from 'commander';
import { BoardChores } from '../../actors/board/chores/boardChores.ts';
import type { RoundOutcome } from '../../actors/session/closer/closeRound.ts';
import { type DriverName, SessionCloser } from '../../actors/session/closer/sessionCloser.ts';
import { startActorSystem, stopSystem } from '../../actors/runtime/runtime.ts';
import { systemClock } from '../../actors/runtime/clock.ts';
import { type DbOptions, openLog, print, withDb } from '../options.ts';
import { int } from '../parse.ts';

interface TickOptions extends DbOptions {
  computer: string;
  sessionDriver: DriverName;
  tmuxSocket?: string;
  tickS: number;
  quietS: number;
}

/**
 * `runledger tick`: exactly one round over a computer's open session closes, then exit. It may run
 * beside the daemon on the same log: the claims keep the two off each other's closes.
 */
export function tickCommand(): Command {
  return withDb(new Command('tick'))
    .description('one round over the sessions to close on a computer (as the daemon runs every --tick-s), then exit')
    .option('--computer <id>', 'the computer whose sessions to close', 'local')
    .addOption(new Option('--session-driver <driver>', 'how sessions are read and closed: exec (a run\'s process) or tmux (a pane)').choices(['exec', 'tmux']).default('exec'))
    .option('--tmux-socket <name>', 'the tmux server of the sessions (tmux -L NAME); the default server when absent')
    .option('--tick-s <s>', 'the daemon\'s round interval, which sets how far apart readings may be and still count as watched', int('--tick-s', 1), 10)
    .option('--quiet-s <s>', 'a session that publishes no turn closes after this long with nothing written to its record', int('--quiet-s', 1), 120)
    .action(async (options: TickOptions) => {
      const store = await openLog(options, { mustExist: true });
      const system = startActorSystem({ onError: () => {} });
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
    });
}

function describe(computer: string, outcomes: readonly RoundOutcome[]): string {
  if (outcomes.length === 0) return `no session of computer ${computer} waits to be closed`;
  const width = Math.max(...outcomes.map((o) => o.sessionId.length));
  return outcomes.map((o) => `${o.sessionId.padEnd(width)}  ${o.outcome.padEnd(8)}  ${o.reason}`).join('\n');
}
