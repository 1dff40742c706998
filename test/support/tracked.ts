/** A promise whose settling a test can look at without awaiting it (an append not yet answered). */
export interface Tracked<T> {
  readonly settled: boolean;
  readonly result: Promise<T>;
}

export function tracked<T>(result: Promise<T>): Tracked<T> {
  const entry = { settled: false, result };
  result.then(
    () => (entry.settled = true),
    () => (entry.settled = true),
  );
  return entry;
}
