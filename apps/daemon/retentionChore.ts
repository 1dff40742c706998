import { checkpointFold } from '../../replay/checkpointStarts.ts';
import { deciders } from '../../replay/deciders.ts';
import type { Clock } from '../../runtime/actors/clock.ts';
import { projections } from '../../runtime/folds/keeper/registry.ts';
import { archiveOnce, recoverArchives } from '../../runtime/store/sqlite/archiveSegments.ts';
import type { SqliteEventStore } from '../../runtime/store/sqlite/sqliteEventStore.ts';

/** A day's cut is found within the hour it becomes due; a round that finds nothing reads the live log once. */
const ROUND_MS = 3_600_000;

export interface RetentionSettings {
  /** `--retain-days`: runs and sessions that ended this many days ago leave the live log. */
  readonly retainDays: number;
  /** `--delete-archives-after-days`: only when given are segments ever deleted. */
  readonly deleteAfterDays?: number;
}

/**
 * Retention as a chore of the process that writes a SQLite log (docs/retention.md): at start, what a
 * crash left half done is finished or undone, then a round runs; then one an hour. Returns its stop.
 */
export async function startRetention(
  store: SqliteEventStore,
  path: string,
  settings: RetentionSettings,
  clock: Clock,
  log: (line: string) => void,
): Promise<() => Promise<void>> {
  for (const line of await recoverArchives(store, path, clock.now())) log(`retention: ${line}`);
  // Each segment, and the live log after a cut, starts with the states of every fold there (docs/retention.md#starting-checkpoints).
  const checkpoint = checkpointFold({ deciders, projections });
  let running: Promise<void> = Promise.resolve();
  let cancel: (() => void) | null = null;
  let stopped = false;
  const round = async (): Promise<void> => {
    try {
      const written = await archiveOnce(store, path, {
        retainDays: settings.retainDays,
        ...(settings.deleteAfterDays !== undefined ? { deleteAfterDays: settings.deleteAfterDays } : {}),
        now: clock.now(),
        checkpoint,
      });
      if (written)
        log(
          `retention: events ${written.from}..${written.to} (${written.events}) moved to archive/${written.file}; the live log gave back ${Math.round((written.freed ?? 0) / 1024)} KB`,
        );
      if (written?.missing?.length) {
        log(
          `retention: the starting checkpoint at seq ${written.to} lacks ${written.missing.join(', ')}: the state before this cut could not be carried on ` +
            `(a cut by a runledger that kept no checkpoints, or a fold of another version, with archives before seq ${written.from} gone); a replay starting at this cut refuses for want of them`,
        );
      }
    } catch (error) {
      // Nothing left the live log that is not durably archived: the next round tries again.
      log(`retention: archiving failed, nothing was lost, next round in an hour: ${(error as Error).message}`);
    }
  };
  const schedule = (): void => {
    if (stopped) return;
    cancel = clock.after(ROUND_MS, () => {
      running = round().then(schedule);
    });
  };
  running = round().then(schedule);
  return async () => {
    stopped = true;
    cancel?.();
    await running;
  };
}
