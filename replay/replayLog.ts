import type { AnyDecider } from '../actors/runtime/decider.ts';
import type { AnyEventCodec } from '../events/codec.ts';
import type { EventStore } from '../events/store/eventStore.ts';
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
    }
  | ({ readonly ok: false } & ReplayDifference);

export interface ReplayLogOptions {
  readonly until?: number;
  readonly onPage?: (seq: number) => void;
  /** The catalog the rows are read with: production's unless a test's log holds its fixtures' events. */
  readonly codec?: AnyEventCodec;
}

/**
 * Verifies the whole log (or up to `until`): every input re-decided from seq 0, against the state
 * folded from the recorded events before it, stopping at the first difference. It only reads: the
 * deciders' snapshots are stored by `rebuild --write`.
 */
export async function replayLog(
  store: Pick<EventStore, 'readAll'> & Partial<Pick<EventStore, 'scanRows'>>,
  deciders: readonly AnyDecider[],
  options: ReplayLogOptions = {},
): Promise<ReplayReport> {
  const replayer: Replayer = new Replayer(deciders, { stopAtFirst: true, ...(options.codec ? { codec: options.codec } : {}) });
  const lastSeq = await feed(store, replayer, {
    ...(options.until === undefined ? {} : { until: options.until }),
    ...(options.onPage ? { onPage: options.onPage } : {}),
  });
  const difference = replayer.firstDifference;
  if (difference) return { ok: false, ...difference, input: await complete(store, difference.input) };
  return { ok: true, inputs: replayer.inputs, decisions: replayer.decisions, lastSeq };
}
