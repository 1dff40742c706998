import type { EventStore } from '../../events/store/eventStore.ts';
import type { AnyDecider } from '../decider.ts';
import { aliasOf, snapshotNameOf, storesItsOwn } from './deciderStates.ts';
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
   * between two inputs, so a later `replay --until` or `replay --run` starts near its seq (those that
   * are a projection's states, the queue's and the board's, as that projection's snapshots).
   */
  readonly writeSnapshots?: boolean;
}

/**
 * Verifies the whole log (or up to `until`): every input re-decided from seq 0, against the state
 * folded from the recorded events before it, stopping at the first difference.
 */
export async function replayLog(
  store: Pick<EventStore, 'readAll'> & Partial<Pick<EventStore, 'snapshots' | 'headSeq' | 'scanRows'>>,
  deciders: readonly AnyDecider[],
  options: ReplayLogOptions = {},
): Promise<ReplayReport> {
  const snapshots = options.writeSnapshots ? store.snapshots : undefined;
  const written: number[] = [];
  const pending: { name: string; seq: number; state: string }[] = [];
  // Per snapshot name, the seq from which the next is due: only forward of the newest one stored, as
  // the history is pruned from its old end and never refilled there. A decider whose states are a
  // projection's (the queue's, the board's) is stored as that projection's snapshot.
  const due = new Map<AnyDecider, { name: string; next: number }>();
  if (snapshots) {
    // And only over the stretch the history keeps: older ones would be pruned as soon as stored.
    const kept = ((await store.headSeq?.()) ?? 0) - snapshots.kept * snapshots.every;
    for (const decider of deciders) {
      const name = snapshotNameOf(decider);
      due.set(decider, { name, next: Math.max(((await snapshots.newestSeq(name)) ?? 0) + snapshots.every, kept) });
    }
  }
  const replayer: Replayer = new Replayer(deciders, {
    stopAtFirst: true,
    ...(snapshots
      ? {
          onBoundary: (seq: number) => {
            let any = false;
            for (const [decider, name] of due) {
              if (seq < name.next) continue;
              // Taken now, between two inputs: the states change in place with the next event.
              const states = replayer.statesOf(decider);
              pending.push({ name: name.name, seq, state: JSON.stringify(storesItsOwn(decider) ? states : aliasOf(decider)!.state(states)) });
              name.next = seq + snapshots.every;
              any = true;
            }
            if (any) written.push(seq);
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
