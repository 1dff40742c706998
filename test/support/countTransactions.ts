import type { AppendRequest } from '../../runtime/store/eventStore.ts';

/**
 * The appends of every write transaction since the test file began: each call of `commitAppends` is
 * one. A test file counts them by wrapping the store's append batch (never replacing it):
 *
 *   vi.mock('../../runtime/store/sqlite/appendBatch.ts', async (original) =>
 *     (await import('./countTransactions.ts')).countingAppendBatch(original));
 */
export const transactions: (readonly AppendRequest[])[] = [];

type AppendBatch = typeof import('../../runtime/store/sqlite/appendBatch.ts');

export async function countingAppendBatch(importOriginal: <T>() => Promise<T>): Promise<AppendBatch> {
  const original = await importOriginal<AppendBatch>();
  return {
    ...original,
    commitAppends: (...args: Parameters<AppendBatch['commitAppends']>) => {
      transactions.push([...args[2]]);
      return original.commitAppends(...args);
    },
  };
}

/** One turn of the event loop: the store's group commit is a setImmediate. */
export const nextTurn = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));
