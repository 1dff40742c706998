import { computerList } from '../../actors/board/boardQueries.ts';
import type { BoardState } from '../../actors/board/boardState.ts';
import { addComputer as addToBoard } from '../../apps/board/addComputer.ts';
import { isSafeId, SAFE_ID_RULE } from '../../events/idRule.ts';
import { boardProjection } from '../../projections/board.ts';
import { systemClock } from '../../runtime/actors/clock.ts';
import { hydrateProjections } from '../../runtime/folds/hydrate.ts';
import type { ComputerAddOptions, ComputerListOptions } from '../commands/computer.ts';
import { openLog } from '../shared/openLog.ts';
import { print } from '../shared/options.ts';

/** `runledger computer add ID`: a computer and its token, printed once (the board keeps only its hash). */
export async function addComputer(id: string, options: ComputerAddOptions): Promise<void> {
  if (!isSafeId(id)) throw new Error(`computer id ${JSON.stringify(id)} must match ${SAFE_ID_RULE}`);
  const store = await openLog(options);
  try {
    const { token } = await addToBoard(store, systemClock, id);
    print(options, { computer_id: id, token }, () => `computer ${id} added; its token (shown once):\n${token}`);
  } finally {
    await store.close();
  }
}

/** `runledger computer list`: the board's computers, connected or when last seen. */
export async function listComputers(options: ComputerListOptions): Promise<void> {
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
      repos: c.repos,
    }));
    // Its repositories (its default first), as it announced them: where runs naming one can go.
    const has = (r: (typeof rows)[number]) => (r.repos === null ? '' : `  repos: ${r.repos.length ? r.repos.join(', ') : 'none'}`);
    const line = (r: (typeof rows)[number]) =>
      `${r.computer_id}  ${r.connected ? `connected since ${r.connected_at}` : r.last_seen_at ? `last seen at ${r.last_seen_at}` : 'never connected'}${has(r)}`;
    print(options, rows, () => (rows.length ? rows.map(line).join('\n') : 'no computers yet: `runledger computer add ID`'));
  } finally {
    await store.close();
  }
}

function iso(at: number | null): string | null {
  return at === null ? null : new Date(at).toISOString();
}
