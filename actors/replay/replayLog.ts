import type { EventStore } from '../../events/store/eventStore.ts';
import type { AnyDecider } from '../decider.ts';
import { snapshotNameOf, storesItsOwn } from './deciderStates.ts';
import { complete, feed } from './feed.ts';
import { type ReplayDifference, Replayer } from './replayer.ts';

export type { DecisionView } from './compare.ts';
export type { ReplayDifference } from './replayer.ts';

export type ReplayReport =
  | {
      readonly ok: true;
      readonly inputs: number;
      readonly decisions: number;
      readonly lastSeq: number;
      /** The seqs at which decider-state snapshots were stored by this replay (with `writeSnapshots`). */
      readonly snapshots?: number[];
    }
  | ({ readonly ok: false } & ReplayDifference);

export interface ReplayLogOptions {
  readonly until?: number;
  readonly onPage?: (seq: number) => void;
  /**
   * Store the deciders' states every `store.snapshots.every` events past the newest such snapshot,
   * between two inputs, so a later `replay --until` or `replay --run` starts near its seq.
   */
  readonly writeSnapshots?: boolean;
}

/**
 * Verifies the whole log (or up to `until`): every input re-decided from seq 0, against the state
 * folded from the recorded events before it, stopping at the first difference.
 */
export async function replayLog(
  store: Pick<EventStore, 'readAll'> & Partial<Pick<EventStore, 'snapshots'>>,
  deciders: readonly AnyDecider[],
  options: ReplayLogOptions = {},
): Promise<ReplayReport> {
  const snapshots = options.writeSnapshots ? store.snapshots : undefined;
  const written: number[] = [];
  const pending: { name: string; seq: number; state: string }[] = [];
  let next = Number.POSITIVE_INFINITY;
  // The deciders whose states are a projection's are snapshotted with it, not here.
  const stored = deciders.filter(storesItsOwn);
  if (snapshots) {
    const newest = await Promise.all(stored.map((d) => snapshots.newestSeq(snapshotNameOf(d))));
    // Only forward of the oldest newest one: the history is pruned from its old end, never refilled there.
    next = Math.min(...newest.map((seq) => seq ?? 0)) + snapshots.every;
  }
  const replayer: Replayer = new Replayer(deciders, {
    stopAtFirst: true,
    ...(snapshots
      ? {
          onBoundary: (seq: number) => {
            if (seq < next) return;
            // Taken now, between two inputs: the states change in place with the next event.
            for (const decider of stored) {
              pending.push({ name: snapshotNameOf(decider), seq, state: JSON.stringify(replayer.statesOf(decider)) });
            }
            written.push(seq);
            next = seq + snapshots.every;
          },
        }
      : {}),
  });
  const lastSeq = await feed(store, replayer, {
    ...(options.until === undefined ? {} : { until: options.until }),
    onPage: async (seq) => {
      options.onPage?.(seq);
      while (pending.length) await snapshots!.save(pending.shift()!);
    },
  });
  const difference = replayer.firstDifference;
  if (difference) return { ok: false, ...difference, input: await complete(store, difference.input) };
  return { ok: true, inputs: replayer.inputs, decisions: replayer.decisions, lastSeq, ...(snapshots ? { snapshots: written } : {}) };
}
