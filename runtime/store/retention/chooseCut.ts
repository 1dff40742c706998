import type { FoldRow } from '../eventStore.ts';

const DAY_MS = 86_400_000;

/** The events after which a run's history is over (on the board, or on the computer that ran it). */
const RUN_ENDS: ReadonlySet<string> = new Set([
  'board.run.finished',
  'board.run.cancelled',
  'board.run.resolved',
  'board.run.deduplicated',
  'run.settled',
  'run.resolved.elsewhere',
]);
const SESSION_ENDS: ReadonlySet<string> = new Set(['session.closed']);

/**
 * What is older than this leaves the live log: `now - retainDays`, rounded down to a UTC midnight, so
 * that a cut happens at most once a day and a year makes about 365 segments, not one an hour.
 */
export function horizonOf(now: number, retainDays: number): number {
  const horizon = now - retainDays * DAY_MS;
  return horizon - (((horizon % DAY_MS) + DAY_MS) % DAY_MS);
}

/**
 * Finds the retention cut (docs/retention.md), fed the live log's rows in seq order: the last seq of
 * the longest prefix whose events are all older than the horizon, shortened to before the first event
 * of any run or session named in it that has not ended in it. A pure fold: no clock, no store.
 */
export class CutFinder {
  private prefixEnd: number;
  /** Runs and sessions seen in the prefix and not ended: their first seq. */
  private readonly open = new Map<string, number>();
  private readonly ended = new Set<string>();
  done = false;

  constructor(
    readonly horizon: number,
    after: number,
  ) {
    this.prefixEnd = after;
  }

  visit(row: FoldRow): void {
    if (this.done) return;
    if (row.at >= this.horizon) {
      this.done = true;
      return;
    }
    for (const entity of entitiesOf(row)) {
      if (this.ended.has(entity)) continue;
      if (!this.open.has(entity)) this.open.set(entity, row.seq);
      if ((entity.startsWith('run:') ? RUN_ENDS : SESSION_ENDS).has(row.type)) {
        this.open.delete(entity);
        this.ended.add(entity);
      }
    }
    this.prefixEnd = row.seq;
  }

  /**
   * The cut: every row at or below it may leave the live log. `archived` says whether an archive holds
   * rows of a run or session: one that does ended there (no cut leaves an open one's rows behind it),
   * and its rows seen here came after its end (a computer's late claim, its `run.ended`), which must
   * not hold this cut, and every later one, back.
   */
  cut(archived: (entity: string) => boolean = () => false): number {
    let cut = this.prefixEnd;
    for (const [entity, first] of this.open) if (first - 1 < cut && !archived(entity)) cut = first - 1;
    return cut;
  }
}

/** The runs and sessions an event belongs to: its stream's entity, and those its data names. */
function entitiesOf(row: FoldRow): string[] {
  const entities: string[] = [];
  const name = row.stream.slice(row.stream.indexOf('/') + 1);
  if (name.startsWith('run:') || name.startsWith('session:')) entities.push(name);
  // Only rows whose text names one are parsed: most of a log's rows are not.
  if (row.data.includes('"runId"') || row.data.includes('"sessionId"')) {
    const data = JSON.parse(row.data) as { runId?: unknown; sessionId?: unknown };
    if (typeof data.runId === 'string') entities.push(`run:${data.runId}`);
    if (typeof data.sessionId === 'string') entities.push(`session:${data.sessionId}`);
  }
  return [...new Set(entities)];
}
