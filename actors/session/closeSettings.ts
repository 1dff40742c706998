/** The close's numbers (docs/rules.md#sessions-hooks-notifications), all in ms. */
export interface CloseSettings {
  /** How often a round runs. */
  readonly tickMs: number;
  /** How long a session that publishes no turn must be watched with nothing written before it closes. */
  readonly quietMs: number;
  /** How long a claim keeps other processes off a close. */
  readonly ttlMs: number;
  /** How long a launch may go without a session before its close stops waiting for one. */
  readonly launchWindowMs: number;
}

export const DEFAULT_CLOSE_SETTINGS: CloseSettings = {
  tickMs: 10_000,
  quietMs: 120_000,
  ttlMs: 15 * 60_000,
  launchWindowMs: 180_000,
};

/**
 * Readings further apart than this are no watch: `max(3 × tick, quiet / 2)`, so that a round or two
 * missed under load does not restart the count, and a daemon that slept does not count its sleep.
 */
export function gapMs(settings: Pick<CloseSettings, 'tickMs' | 'quietMs'>): number {
  return Math.round(Math.max(3 * settings.tickMs, settings.quietMs / 2));
}
