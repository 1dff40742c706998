import type { AppendLease, AppendRequest, AppendResult, EventStore } from '../../../runtime/store/eventStore.ts';
import { LeaseLostError } from '../../../runtime/store/leaseLost.ts';
import type { BoardPeers } from './boardPeers.ts';

/**
 * The store as the board's chores (hooks, notices, adoptions, the tick) write it on a log shared by
 * several boards: every append carries the chores' lease, checked in its transaction, and one made
 * without it, or refused because it was lost meanwhile, is thrown: a chore's round or take ends there,
 * where a conflict would be read again and tried again (an outbox would spin on it).
 */
export function leasedStore(store: EventStore, lease: () => AppendLease | null): EventStore {
  const append = async (request: AppendRequest): Promise<AppendResult> => {
    // A request naming its lease keeps it: an effect's record is appended under the epoch of its take (effectConsumer.ts, EpochTakes).
    const held = request.lease ?? lease();
    if (held === null || held.epoch === 0)
      throw new LeaseLostError(`board ${held?.holder ?? ''} does not hold the chores' lease: the chore is left to its holder`);
    const result = await store.append({ ...request, lease: held });
    if (!result.ok && result.conflict.leaseLost) throw new LeaseLostError(result.conflict.message);
    return result;
  };
  return new Proxy(store, {
    get(target, property) {
      if (property === 'append') return append;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/**
 * What a board's chores (startBoardChores) run on: with peers, the store under their lease and only
 * while this board holds it, and the lease itself (what its hooks are taken under); alone (null), the
 * store as it is, always.
 */
export function choresOn(
  store: EventStore,
  peers: BoardPeers | null,
): { store: EventStore; mayRun?: () => boolean; lease?: () => AppendLease | null } {
  if (!peers) return { store };
  const lease = () => peers.choreLease();
  return { store: leasedStore(store, lease), mayRun: () => peers.holdsChores(), lease };
}
