import { foldMark, parseMark, settles } from '../../../actors/outboxMark.ts';
import type { EventStore } from '../../store/eventStore.ts';

export interface MarkCheck {
  /** The outbox's stream (`outbox:<consumer>`), the name its mark is kept under. */
  readonly mark: string;
  readonly seq: number;
  /** What the log contradicts in it; absent when it holds. */
  readonly problem?: string;
  /** A mark of another shape: never read (the outbox folds its stream from the start instead). */
  readonly unread?: true;
}

/**
 * Checks each outbox's mark (docs/rules.md#projections, the cursors row: a cursor moves in its mark too) against the log:
 * what a mark says can only be behind the log, never ahead of it or contrary to it. Its version is one
 * its stream reached; its cursor is within the log and at or past every take its version folds; each
 * effect it holds pending is at or before its cursor, was taken by the event it names (the effect
 * itself for an implicit take, else an `outbox.taken` listing it), and has no record of its end in the
 * stream at or before the cursor. What the mark cannot be checked on (which events past the last take
 * call for nothing) is the consumer's, read from the log alone at every start.
 */
export async function checkOutboxMarks(store: Pick<EventStore, 'checkpoints' | 'readStream' | 'readAll' | 'headSeq'>): Promise<MarkCheck[]> {
  const head = await store.headSeq();
  const checks: MarkCheck[] = [];
  for (const checkpoint of await store.checkpoints.list()) {
    if (!checkpoint.name.startsWith('outbox:')) continue;
    const { name, seq } = checkpoint;
    const mark = parseMark(checkpoint.state);
    if (mark === null) {
      checks.push({ mark: name, seq, unread: true });
      continue;
    }
    const stream = await store.readStream(name);
    const problem = await (async (): Promise<string | null> => {
      const last = stream.at(-1)?.version ?? 0;
      if (mark.version > last) return `its version ${mark.version} is past its stream's last, ${last}`;
      if (mark.cursor > head) return `its cursor ${mark.cursor} is past the log's head, seq ${head}`;
      const folded = foldMark(
        { version: 0, cursor: 0, pending: {} },
        stream.filter((e) => e.version <= mark.version),
      );
      if (folded.cursor > mark.cursor) return `its cursor ${mark.cursor} is behind a take through seq ${folded.cursor}`;
      for (const [key, take] of Object.entries(mark.pending)) {
        const effect = Number(key);
        if (effect > mark.cursor) return `the effect of seq ${effect} it holds pending is past its cursor ${mark.cursor}`;
        const [taken] = await store.readAll(take - 1, 1);
        const byTake =
          taken?.seq === take && (take === effect || (taken.type === 'outbox.taken' && taken.stream === name && taken.data.effects.includes(effect)));
        if (!byTake) return `the effect of seq ${effect} it holds pending was not taken by seq ${take}`;
        const ended = stream.find((e) => e.seq <= mark.cursor && settles(e) && e.data.effect === effect);
        if (ended) return `the effect of seq ${effect} it holds pending ended at seq ${ended.seq} (${ended.type})`;
      }
      return null;
    })();
    checks.push(problem === null ? { mark: name, seq } : { mark: name, seq, problem });
  }
  return checks;
}
