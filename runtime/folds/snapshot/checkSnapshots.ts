import { isDeepStrictEqual } from 'node:util';
import { messageOf } from '../../../events/thrown.ts';
import { type AnyProjection, checkpointName } from '../../../projections/projection.ts';
import type { Checkpoint, EventStore, SnapshotInfo, SnapshotSource } from '../../store/eventStore.ts';
import { firstDifference } from './firstDifference.ts';

export interface SnapshotCheck {
  readonly seq: number;
  readonly source: SnapshotSource;
  readonly equal: boolean;
  readonly detail?: string;
}

export interface ProjectionCheck {
  readonly projection: string;
  /** The seq of its checkpoint, or null when none is stored. */
  readonly checkpointSeq: number | null;
  /** Every stored state of it (checkpoint and history) equals its rebuild at that seq. */
  readonly equal: boolean;
  /** The first difference, when there is one. */
  readonly detail?: string;
  readonly snapshots: readonly SnapshotCheck[];
}

export interface RebuildCheck {
  readonly ok: boolean;
  readonly head: number;
  readonly projections: readonly ProjectionCheck[];
  /** The difference at the lowest seq, across projections. */
  readonly firstDifference: ({ readonly projection: string } & SnapshotCheck) | null;
  /** Stored states of a name no projection has now (an older version): not checked. */
  readonly ignored: readonly string[];
  /** With `write`: the seqs at which snapshots were stored, and the checkpoints stored at the head. */
  readonly written?: { readonly snapshots: readonly number[]; readonly checkpoints: readonly string[] };
}

export interface RebuildOptions {
  /**
   * Store what the rebuild folded: the checkpoint of each of `checkpointed` at the head, and a
   * snapshot of every projection each `store.snapshots.every` events (between two inputs), over the
   * stretch of the log the snapshot history keeps.
   */
  readonly write?: boolean;
  /** The projections whose newest state is a checkpoint (the daemon's); the others only get snapshots. */
  readonly checkpointed?: ReadonlySet<AnyProjection>;
  readonly pageSize?: number;
  readonly onPage?: (seq: number) => void;
}

/**
 * `runledger rebuild`: refolds every projection from seq 0 and compares every state stored of it,
 * checkpoint and snapshots, with the rebuild as of that state's own seq. Pages are cut at each stored
 * seq, so each comparison sees exactly the events up to it; a state is loaded only when it is due.
 */
export async function rebuildAndCheck(
  store: Pick<EventStore, 'readAll' | 'headSeq' | 'snapshots' | 'checkpoints'>,
  projections: readonly AnyProjection[],
  options: RebuildOptions = {},
): Promise<RebuildCheck> {
  const names = projections.map((p) => checkpointName(p));
  const stored = await store.snapshots.list();
  // An outbox's mark (its stream's fold, named after it) is no projection: it is re-read from its stream, not checked here.
  const ignored = [...new Set(stored.filter((s) => !names.includes(s.name) && !s.name.startsWith('outbox:')).map((s) => s.name))];
  const due = new Map<number, SnapshotInfo[]>();
  for (const info of stored) {
    if (!names.includes(info.name)) continue;
    const list = due.get(info.seq) ?? [];
    list.push(info);
    due.set(info.seq, list);
  }
  const dueSeqs = [...due.keys()].sort((a, b) => a - b);
  const checks = new Map<string, SnapshotCheck[]>(names.map((n) => [n, []]));
  const states = projections.map((p) => p.initial());
  const head = await store.headSeq();
  const every = store.snapshots.every;
  const writeFrom = Math.max(1, head - store.snapshots.kept * every);
  let nextWrite = options.write ? Math.ceil(writeFrom / every) * every : Number.POSITIVE_INFINITY;
  const written: number[] = [];
  const pending: Checkpoint[] = [];

  const compareAt = async (seq: number): Promise<void> => {
    for (const info of due.get(seq) ?? []) {
      const i = names.indexOf(info.name);
      checks.get(info.name)!.push(await compare(store, info, states[i]));
    }
  };

  await compareAt(0);
  let last = 0;
  let d = 0;
  const pageSize = options.pageSize ?? 2000;
  for (;;) {
    while (d < dueSeqs.length && dueSeqs[d]! <= last) d++;
    const limit = Math.min(pageSize, (dueSeqs[d] ?? Number.POSITIVE_INFINITY) - last);
    const page = await store.readAll(last, limit);
    for (const event of page) {
      // Between two inputs, before the input is folded: where a replay can start cleanly.
      if (event.cause === null && event.seq - 1 >= nextWrite) {
        for (let i = 0; i < projections.length; i++) pending.push({ name: names[i]!, seq: event.seq - 1, state: JSON.stringify(states[i]) });
        written.push(event.seq - 1);
        nextWrite = event.seq - 1 + every;
      }
      for (let i = 0; i < projections.length; i++) states[i] = projections[i]!.evolve(states[i], event);
    }
    while (pending.length) await store.snapshots.save(pending.shift()!);
    if (page.length) {
      last = page[page.length - 1]!.seq;
      await compareAt(last);
    }
    options.onPage?.(last);
    if (page.length < limit) break;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }

  for (const info of stored) {
    if (names.includes(info.name) && info.seq > last) {
      checks.get(info.name)!.push({
        seq: info.seq,
        source: info.source,
        equal: false,
        detail: `the ${info.source === 'checkpoint' ? 'checkpoint' : 'snapshot'} is at seq ${info.seq} but the log ends at seq ${last}`,
      });
    }
  }
  const checkpoints: string[] = [];
  if (options.write) {
    for (let i = 0; i < projections.length; i++) {
      const state = JSON.stringify(states[i]);
      if (options.checkpointed?.has(projections[i]!)) {
        await store.checkpoints.save({ name: names[i]!, seq: last, state });
        checkpoints.push(names[i]!);
      } else if (last > 0 && !written.includes(last)) {
        await store.snapshots.save({ name: names[i]!, seq: last, state });
      }
    }
    if (last > 0 && !written.includes(last) && projections.some((p) => !options.checkpointed?.has(p))) written.push(last);
  }

  const reports = projections.map((projection, i): ProjectionCheck => {
    const list = checks.get(names[i]!)!.sort((a, b) => a.seq - b.seq);
    const wrong = list.find((c) => !c.equal);
    const checkpoint = stored.find((s) => s.name === names[i] && s.source === 'checkpoint');
    return {
      projection: projection.name,
      checkpointSeq: checkpoint?.seq ?? null,
      equal: !wrong,
      ...(wrong ? { detail: wrong.detail } : {}),
      snapshots: list,
    };
  });
  let first: RebuildCheck['firstDifference'] = null;
  for (const report of reports) {
    for (const check of report.snapshots) {
      if (!check.equal && (first === null || check.seq < first.seq)) first = { projection: report.projection, ...check };
    }
  }
  return {
    ok: first === null,
    head: last,
    projections: reports,
    firstDifference: first,
    ignored,
    ...(options.write ? { written: { snapshots: written, checkpoints } } : {}),
  };
}

async function compare(store: Pick<EventStore, 'snapshots'>, info: SnapshotInfo, state: unknown): Promise<SnapshotCheck> {
  const snapshot = await store.snapshots.load(info);
  const base = { seq: info.seq, source: info.source };
  if (!snapshot) return { ...base, equal: false, detail: 'it disappeared while the rebuild ran' };
  const rebuilt = JSON.stringify(state);
  // The same fold writes the same text; only a difference is worth parsing both for.
  if (rebuilt === snapshot.state) return { ...base, equal: true };
  let stored: unknown;
  try {
    stored = JSON.parse(snapshot.state);
  } catch (error) {
    return { ...base, equal: false, detail: `its state is not JSON (${messageOf(error)})` };
  }
  const fresh = JSON.parse(rebuilt);
  if (isDeepStrictEqual(stored, fresh)) return { ...base, equal: true };
  return { ...base, equal: false, detail: firstDifference(stored, fresh) };
}
