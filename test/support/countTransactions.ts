import type { AppendRequest } from '../../runtime/store/eventStore.ts';
import type { SqliteEventStore, SqliteStoreOptions } from '../../runtime/store/sqlite/sqliteEventStore.ts';
import { openCounterStore } from '../fixtures/counter/counterStore.ts';
import { tempDbPath } from './tempStore.ts';

/**
 * The appends of every write transaction of the stores opened by `openCountedStore` since the test
 * began (a test empties it first): each of the group commit's transactions is one.
 */
export const transactions: (readonly AppendRequest[])[] = [];

/** `openCounterStore` whose write transactions are counted in `transactions`. */
export function openCountedStore(path: string = tempDbPath(), options: SqliteStoreOptions = {}): Promise<SqliteEventStore> {
  return openCounterStore(path, { ...options, faults: { ...options.faults, committing: (requests) => transactions.push([...requests]) } });
}

/** One turn of the event loop: the store's group commit is a setImmediate. */
export const nextTurn = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));
