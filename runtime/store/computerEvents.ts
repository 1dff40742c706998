import type { DomainEvent } from '../../events/catalog.ts';
import { parseStream } from '../../events/envelope.ts';
import type { EventStore } from './eventStore.ts';
import type { LogQueries } from './logQueries.ts';

/** An event of a computer's own log as it reports it to its board: the row as stored there, `data` as a JSON value. */
export interface ReportedRow {
  readonly seq: number;
  readonly stream: string;
  readonly version: number;
  readonly type: string;
  readonly data: unknown;
  readonly at: number;
  readonly cause: number | null;
  readonly actor: string;
}

/**
 * The events computers with logs of their own report to their board (their runs', their lanes' and
 * their sessions'), kept by the board APART from its log: the board never decides from them, and
 * `replay` of its log never reads them. They are what lets the board's `audit`, run, lane and board
 * pages show a remote computer's half of a run, also once that computer is gone.
 */
export interface ComputerEvents {
  /**
   * Keeps `rows` of `computer` (in its seq order), each once: a row whose (computer, seq) is held
   * already is a resend and is dropped. Answers how far the board has them: the highest seq of
   * `computer` it holds or dropped on purpose (over a cap), so the computer's cursor moves past it.
   */
  record(computer: string, rows: readonly ReportedRow[]): Promise<number>;
  /** Every reported event of one entity (`run:<id>`, `session:<id>`), its streams' and those whose data names it, in arrival order. */
  readEntity(kindAndId: string): Promise<DomainEvent[]>;
  /** Ids of reported entities of `kind` starting with `prefix`, sorted, at most `limit`. */
  entityIdsStartingWith(kind: 'run' | 'session', prefix: string, limit: number): Promise<string[]>;
  /** Reported events past `after` (a position of this store, not a seq of any log), in arrival order, at most `limit`. */
  readAll(after: number, limit: number): Promise<{ readonly position: number; readonly event: DomainEvent }[]>;
}

/** What the board's readers of one entity need: its own log's events and the computers' reported ones. */
export type EntityReads = Pick<EventStore, 'readEntity'> & Pick<LogQueries, 'entityIdsStartingWith'>;

/**
 * The board's log and the computers' reported events read as one, for the readers that explain a run
 * (audit, the run page, the lane page, the history): an entity's events from both, in time order (each
 * log's seqs count in its own log, so `at` is the only order they share; a stable sort keeps each
 * log's own order among equal times). Nothing that decides reads through this.
 */
export function withComputerEvents(store: EntityReads, reported: ComputerEvents | null): EntityReads {
  if (reported === null) return store;
  return {
    async readEntity(kindAndId) {
      const [own, theirs] = await Promise.all([store.readEntity(kindAndId), reported.readEntity(kindAndId)]);
      return mergeInTime(own, theirs);
    },
    async entityIdsStartingWith(kind, prefix, limit) {
      const [own, theirs] = await Promise.all([
        store.entityIdsStartingWith(kind, prefix, limit),
        reported.entityIdsStartingWith(kind, prefix, limit),
      ]);
      return [...new Set([...own, ...theirs])].sort().slice(0, limit);
    },
  };
}

/** Two logs' events of one entity in time order; the board's first among equal times (it decided before the computer heard). */
export function mergeInTime(own: readonly DomainEvent[], theirs: readonly DomainEvent[]): DomainEvent[] {
  if (theirs.length === 0) return [...own];
  return [...own, ...theirs].sort((a, b) => a.at - b.at);
}

/**
 * The bounds of what computers report (README: "The board's copy of its computers' events"):
 * - a batch holds at most `batchEvents` events and its body at most `batchBytes`; the computer cuts
 *   its batches well below (`sendBytes`), and leaves out (naming it in its own log) an event that
 *   alone is over `eventBytes` (a prompt near its 4 MiB limit), rather than stall on it;
 * - the board keeps at most `perStream` events of one run's or one session's stream of a computer
 *   (a run decides a few dozen): past that it drops them, and counts them as held, so nothing is
 *   sent again. Lane and computer streams are kept whole: the board folds them for each computer's
 *   queue and slots, and they grow with decisions, like the computer's log.
 */
export const REPORT_LIMITS = {
  batchEvents: 500,
  batchBytes: 8 * 1024 * 1024,
  sendBytes: 2 * 1024 * 1024,
  eventBytes: 6 * 1024 * 1024,
  perStream: 1_000,
} as const;

/** A reported row as a board keeps it: with the entity its stream is of and the run or session its data names. */
export interface KeptRow extends ReportedRow {
  readonly entity: string;
  readonly mentions: string | null;
}

/**
 * Of `rows` (one computer's, in seq order), those a board keeps, bounded by REPORT_LIMITS.perStream:
 * `countOf` says how many events of a run's or session's stream of this computer it holds already.
 * Every board dialect keeps by this one rule.
 */
export function rowsToKeep(rows: readonly ReportedRow[], countOf: (entity: string, stream: string) => number): KeptRow[] {
  const held = new Map<string, number>();
  const kept: KeptRow[] = [];
  for (const row of rows) {
    const { kind, id } = parseStream(row.stream);
    const entity = `${kind}:${id}`;
    if (kind === 'run' || kind === 'session') {
      const count = held.get(row.stream) ?? countOf(entity, row.stream);
      if (count >= REPORT_LIMITS.perStream) continue;
      held.set(row.stream, count + 1);
    }
    kept.push({ ...row, entity, mentions: mentionOf(row.data) });
  }
  return kept;
}

/** The run or session an event's data names (a lane's queue decision about a run): `run:<id>`, `session:<id>`, or null. */
function mentionOf(data: unknown): string | null {
  if (typeof data !== 'object' || data === null) return null;
  const { runId, sessionId } = data as { runId?: unknown; sessionId?: unknown };
  if (typeof runId === 'string') return `run:${runId}`;
  if (typeof sessionId === 'string') return `session:${sessionId}`;
  return null;
}
