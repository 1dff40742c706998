import type { DomainEvent } from '../../events/catalog.ts';
import { FINISHED_STATES } from '../../events/runStates.ts';
import { durationOf, FINISHING_TYPES, type RunRecord, runRecordOf } from '../../projections/audit/runRecord.ts';
import type { EventStore } from '../store/eventStore.ts';

export interface HistoryQuery {
  readonly state: string | null;
  readonly lane: string | null;
  readonly computer: string | null;
  /** A substring of the prompt, the reply or the error, in any case. */
  readonly text: string | null;
  /** Only runs that finished at a seq below this one: the cursor of the page before. */
  readonly before: number | null;
  readonly limit: number;
}

/** A finished run as a row of the history: its facts, with its texts cut to an excerpt. */
export interface HistoryRow {
  readonly runId: string;
  readonly lane: string | null;
  readonly state: string;
  readonly computer: string | null;
  readonly submittedAt: number | null;
  readonly claimedAt: number | null;
  readonly startedAt: number | null;
  readonly finishedAt: number;
  /** How long its agent took (see durationOf: its process's start to its exit); null when not known. */
  readonly durationMs: number | null;
  /** What its agent reported it cost; null when it reported none (unknown, not zero). */
  readonly costUsd: number | null;
  /** The seq of the event that finished it: the cursor past this row. */
  readonly seq: number;
  readonly prompt: string;
  readonly reply: string;
  readonly error: string;
}

export interface HistoryPage {
  readonly runs: readonly HistoryRow[];
  /** `before` for the next, older page; null when the log holds nothing older. */
  readonly next: number | null;
  /** The page stopped at its scan budget, not at its limit: older runs may still match (follow `next`). */
  readonly partial: boolean;
}

/** Log entries read per step backwards. */
const WINDOW = 1_000;
/**
 * Entries one request reads at most: a filter that matches nothing in a log of millions answers in
 * bounded time, with a cursor to search on from, rather than reading the whole log at once.
 */
export const SCAN_BUDGET = 20_000;
/**
 * Runs one request reads the events of at most: a filter on lane or text is checked on those, so a
 * filter that matches nothing reads at most this many runs (each a few dozen rows) before it answers
 * `partial`, instead of every run of the budget's window (measured: 12,500 runs with 20 KB replies took
 * 1.5 s of the board's loop).
 */
export const RUN_BUDGET = 500;
const EXCERPT = 300;

/** A finished run the history found: its record, read from its own events, and the event that finished it. */
export interface FoundRun {
  readonly record: RunRecord;
  readonly finishing: DomainEvent;
}

/**
 * A page of the history of finished runs, newest first: a paged read of the log backwards from
 * `before`, finding the events that end runs and reading each such run's own events (through the
 * store's entity index). Nothing is kept between pages: the history costs the board no memory.
 */
export async function historyPage(store: Pick<EventStore, 'headSeq' | 'readAll' | 'readEntity'>, query: HistoryQuery): Promise<HistoryPage> {
  const found = await historyRuns(store, query);
  return { runs: found.runs.map(({ record, finishing }) => rowOf(record, finishing)), next: found.next, partial: found.partial };
}

/**
 * The finished runs of a page of the history, as their records: what `historyPage` shows as rows and
 * the board's `GET /v1/runs` lists. `full`: the page ends early, with `next`, once the texts of the runs
 * it holds (prompt, reply, error) pass this many characters, so a page of whole texts stays bounded.
 */
export async function historyRuns(
  store: Pick<EventStore, 'headSeq' | 'readAll' | 'readEntity'>,
  query: HistoryQuery,
  full = Number.POSITIVE_INFINITY,
): Promise<{ runs: FoundRun[]; next: number | null; partial: boolean }> {
  const runs: FoundRun[] = [];
  const seen = new Set<string>();
  const text = query.text?.toLowerCase() ?? null;
  let upper = query.before ?? (await store.headSeq()) + 1;
  let budget = SCAN_BUDGET;
  let runsRead = 0;
  let characters = 0;
  while (upper > 1 && budget > 0) {
    const after = Math.max(0, upper - 1 - Math.min(WINDOW, budget));
    const events = (await store.readAll(after, upper - 1 - after)).filter((e) => e.seq < upper);
    budget -= upper - 1 - after;
    for (let i = events.length - 1; i >= 0; i--) {
      const event = events[i]!;
      if (!FINISHING_TYPES.has(event.type) || !early(event, query)) continue;
      const runId = (event.data as { runId: string }).runId;
      if (seen.has(runId)) continue;
      seen.add(runId);
      // Out of runs to read: the next page searches on from this event, which it reads first.
      if (runsRead++ === RUN_BUDGET) return { runs, next: event.seq + 1, partial: true };
      const record = runRecordOf(runId, await store.readEntity(`run:${runId}`));
      if (!matches(record, query, text)) continue;
      // One past the page, so that `next` is given only when an older page has something to show.
      if (runs.length === query.limit || characters > full) return { runs, next: runs.at(-1)!.finishing.seq, partial: false };
      runs.push({ record, finishing: event });
      characters += (record.prompt?.length ?? 0) + (record.reply?.length ?? 0) + (record.error?.length ?? 0);
    }
    upper = after + 1;
  }
  return { runs, next: upper > 1 ? upper : null, partial: upper > 1 };
}

/** What the finishing event alone can rule out, before the run's own events are read. */
function early(event: DomainEvent, query: HistoryQuery): boolean {
  const state = event.type === 'board.run.finished' ? event.data.state : event.type === 'board.run.resolved' ? 'resolved' : 'cancelled';
  if (query.state !== null && state !== query.state) return false;
  if (query.computer !== null && 'computerId' in event.data && event.data.computerId !== query.computer) return false;
  // Cancelled before any claim: held by no computer.
  if (query.computer !== null && event.type === 'board.run.cancelled') return false;
  return true;
}

function matches(record: RunRecord, query: HistoryQuery, text: string | null): boolean {
  if (query.lane !== null && record.lane !== query.lane) return false;
  if (query.computer !== null && record.computer !== query.computer) return false;
  if (text === null) return true;
  return [record.prompt, record.reply, record.error].some((t) => t?.toLowerCase().includes(text));
}

function rowOf(record: RunRecord, finishing: DomainEvent): HistoryRow {
  return {
    runId: record.runId,
    lane: record.lane,
    state: record.state ?? '?',
    computer: record.computer,
    submittedAt: record.submittedAt,
    claimedAt: record.claimedAt,
    startedAt: record.startedAt,
    finishedAt: record.finishedAt ?? finishing.at,
    durationMs: durationOf(record),
    costUsd: record.usage?.costUsd ?? null,
    seq: finishing.seq,
    prompt: excerpt(record.prompt),
    reply: excerpt(record.reply),
    error: excerpt(record.error),
  };
}

/** The start of a text, cut with an ellipsis when longer: what a list shows of a prompt or a reply. */
export function excerpt(text: string | null): string {
  if (text === null) return '';
  return text.length > EXCERPT ? `${text.slice(0, EXCERPT)}…` : text;
}

export const DEFAULT_LIMIT = 25;
export const MAX_LIMIT = 100;
export const MAX_SEARCH_TEXT = 200;

/**
 * `?state=&lane=&computer=&q=&before=&limit=` of the history's JSON route, each optional, checked:
 * a bad one is refused naming the parameter and what it takes.
 */
export function historyQueryOf(params: URLSearchParams, isSafeId: (id: string) => boolean, idRule: string): HistoryQuery | { error: string } {
  const given = (name: string) => {
    const value = params.get(name)?.trim();
    return value ? value : null;
  };
  const state = given('state');
  if (state !== null && !(FINISHED_STATES as readonly string[]).includes(state))
    return { error: `state must be one of ${FINISHED_STATES.join(', ')} (a finished run's state), not ${JSON.stringify(state.slice(0, 40))}` };
  for (const name of ['lane', 'computer']) {
    const id = given(name);
    if (id !== null && !isSafeId(id)) return { error: `${name} must be a ${name} id, matching ${idRule}` };
  }
  const text = given('q');
  if (text !== null && text.length > MAX_SEARCH_TEXT) return { error: `q (the text searched for) must be at most ${MAX_SEARCH_TEXT} characters` };
  const number = (name: string, max: number) => {
    const raw = given(name);
    if (raw === null) return null;
    const n = Number(raw);
    return Number.isSafeInteger(n) && n >= 1 && n <= max ? n : Number.NaN;
  };
  const before = number('before', Number.MAX_SAFE_INTEGER);
  if (Number.isNaN(before)) return { error: 'before must be a positive whole number: the `next` of the page before' };
  const limit = number('limit', MAX_LIMIT);
  if (Number.isNaN(limit)) return { error: `limit must be a whole number from 1 to ${MAX_LIMIT}` };
  return { state, lane: given('lane'), computer: given('computer'), text, before, limit: limit ?? DEFAULT_LIMIT };
}
