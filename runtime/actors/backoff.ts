/**
 * Full-jitter backoff (the delay is drawn uniformly below an exponential cap), so that computers
 * cut off together do not reconnect together. `random` is drawn by the caller, in [0, 1).
 */
export function fullJitterMs(attempt: number, random: number, baseMs = 1_000, capMs = 30_000): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.max(0, attempt));
  return Math.floor(random * ceiling);
}
