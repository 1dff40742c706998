// When a page opens its live socket again. A pure policy, so that it is tested as it is served.

export const BACKOFF = {
  /** The wait after the first failure. */
  firstMs: 500,
  /** The longest wait: a board away for long is tried twice a minute. */
  maxMs: 30_000,
  /**
   * A connection that stayed up this long was healthy: the next failure waits `firstMs` again. One
   * dropped sooner (refused, closed as too far behind) counts as one more failure: a tab the board
   * keeps dropping must not come back at once each time.
   */
  healthyMs: 10_000,
};

/** The wait before the next open after `failures` failures in a row, spread by up to a quarter either way (`random` in [0, 1)). */
export function reconnectDelay(failures, random = Math.random) {
  const base = Math.min(BACKOFF.maxMs, BACKOFF.firstMs * 2 ** Math.min(failures, 30));
  return base * (0.75 + random() * 0.5);
}

/** The failures in a row once a socket closed: `openedForMs` is how long it was open (null: it never opened). */
export function failuresAfter(failures, { openedForMs }) {
  return openedForMs !== null && openedForMs >= BACKOFF.healthyMs ? 0 : failures + 1;
}
