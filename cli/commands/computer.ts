import { Command } from 'commander';
import { addComputer } from '../../actors/boardHost/addComputer.ts';
import { SafeId } from '../../events/queueEvents.ts';
import { systemClock } from '../../events/clock.ts';
import { type BoardState, isConnected } from '../../actors/board/boardState.ts';
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
        if (!SafeId.safeParse(id).success) throw new Error(`computer id ${JSON.stringify(id)} must match ^[A-Za-z0-9-]{1,64}$`);
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
      .description('the computers of this board, and which are connected')
      .action(async (options: DbOptions) => {
        const store = await openLog(options, { mustExist: true });
        try {
          const board = (await hydrateProjections(store, [boardProjection])).get(boardProjection.name)!.state as BoardState;
          const rows = Object.keys(board.computers)
            .sort()
            .map((id) => ({ computer_id: id, connected: isConnected(board, id) }));
          print(options, rows, () => (rows.length ? rows.map((r) => `${r.computer_id}${r.connected ? '  connected' : ''}`).join('\n') : 'no computers yet: `runledger computer add ID`'));
        } finally {
          await store.close();
        }
      }),
  );
  return computer;
}
