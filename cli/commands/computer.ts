import { Command } from 'commander';
import { addComputer } from '../../actors/board/host/addComputer.ts';
import { SAFE_ID_RULE, isSafeId } from '../../events/safeId.ts';
import { systemClock } from '../../actors/runtime/clock.ts';
import { computerList } from '../../actors/board/boardQueries.ts';
import type { BoardState } from '../../actors/board/boardState.ts';
import { boardProjection } from '../../projections/board.ts';
import { hydrateProjections } from '../../projections/hydrate.ts';
import { type DbOptions, openLog, print, withDb } from '../options.ts';

export function computerCommand(): Command {
  const computer = new Command('computer').description('computers that may claim runs from this board');
  computer.addCommand(
    withDb(new Command('add'))
      .description('create a computer and print its token, once (the board keeps only its hash)')
      .argument('<id>')
      .action(async (id: string, options: DbOptions) => {
        if (!isSafeId(id)) throw new Error(`computer id ${JSON.stringify(id)} must match ${SAFE_ID_RULE}`);
        const store = await openLog(options);
        try {
          const { token } = await addComputer(store, systemClock, id);
          print(options, { computer_id: id, token }, () => `computer ${id} added; its token (shown once):\n${token}`);
        } finally {
          await store.close();
        }
      }),
  );
  computer.addCommand(
    withDb(new Command('list'))
      .description('the computers of this board: which are connected since when, and when the others were last seen')
      .action(async (options: DbOptions) => {
        const store = await openLog(options, { mustExist: true });
        try {
          const board = (await hydrateProjections(store, [boardProjection])).get(boardProjection.name)!.state as BoardState;
          // "Connected" is as the board last recorded it: its pings take a computer whose daemon is gone
          // offline within two intervals, with the time it was last heard from.
          const rows = computerList(board).map((c) => ({
            computer_id: c.computerId,
            connected: c.connected,
            connected_at: iso(c.connectedAt),
            last_seen_at: iso(c.lastSeenAt),
          }));
          const line = (r: (typeof rows)[number]) =>
            `${r.computer_id}  ${r.connected ? `connected since ${r.connected_at}` : r.last_seen_at ? `last seen at ${r.last_seen_at}` : 'never connected'}`;
          print(options, rows, () => (rows.length ? rows.map(line).join('\n') : 'no computers yet: `runledger computer add ID`'));
        } finally {
          await store.close();
        }
      }),
  );
  return computer;
}

function iso(at: number | null): string | null {
  return at === null ? null : new Date(at).toISOString();
}
