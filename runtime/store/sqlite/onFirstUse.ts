/**
 * A statement prepared when it is first used, then kept for the connection's life. A store prepares
 * some thirty statements, and most of its openings use a few: the simulator opens one for each
 * machine's life and each check of a log (about 5 ms of its 8 ms were statements it never ran), a CLI
 * command for one query. A statement's SQL is still checked by the tests that run it.
 */
export function onFirstUse<T>(prepare: () => T): () => T {
  let prepared: T | undefined;
  return () => {
    prepared ??= prepare();
    return prepared;
  };
}
