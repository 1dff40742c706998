import { type BoardState, isTerminal, type RunState } from '../../actors/board/boardState.ts';
import { isSafeId, SAFE_ID_RULE } from '../../events/idRule.ts';
import { FINISHED_STATES, LIVE_STATES, RUN_STATES } from '../../events/runStates.ts';
import { type ChangesBody, changesToWire } from '../../events/wire/changes.ts';
import { type UsageBody, usageToWire } from '../../events/wire/usage.ts';
import { durationOf, type RunRecord, runRecordOf } from '../../projections/audit/runRecord.ts';
import { excerpt, historyRuns, MAX_LIMIT, MAX_SEARCH_TEXT } from '../../runtime/audit/runHistory.ts';
import type { EventStore } from '../../runtime/store/eventStore.ts';

/**
 * `GET /v1/runs?lane=&state=&computer=&q=&limit=&before=&texts=`: the board's runs, newest first, live
 * and finished alike. The live ones (queued, claimed, running) come first, newest submitted first:
 * they have not finished, so they are newer than any run that has; then the finished ones, newest
 * finished first, read from the log as the web view's history reads them. Nothing is kept between
 * pages: `next`, given back as `before`, says where the next page starts.
 */

/** Where a page starts: among the live runs (below a submission order), or among the finished ones (below a seq). */
export type RunCursor = { readonly live: number } | { readonly finished: number };

export interface RunListQuery {
  readonly lane: string | null;
  readonly state: (typeof RUN_STATES)[number] | null;
  readonly computer: string | null;
  /** A text its prompt, reply or error contains, in any case: how a run whose id was lost is found. */
  readonly text: string | null;
  readonly limit: number;
  readonly before: RunCursor | null;
  /** `excerpt`: the first 300 characters of each text (a list); `whole`: every text whole (a transcript). */
  readonly texts: 'excerpt' | 'whole';
}

/** A run as the list (and `GET /v1/runs/{run_id}/details`) gives it. Times are ISO 8601, UTC. */
export interface RunRow {
  run_id: string;
  lane: string | null;
  state: string;
  computer_id?: string;
  submitted_at?: string;
  claimed_at?: string;
  started_at?: string;
  finished_at?: string;
  /** How long its agent took: its process's start to its exit, else its start (or claim) to its end on the board. */
  duration_ms?: number;
  /** As its completion reported it; absent when no agent said (unknown, not zero). */
  usage?: UsageBody;
  /** What its turn changed in its lane's worktree; absent outside a repository. */
  changes?: ChangesBody;
  prompt: string;
  reply?: string;
  error?: string;
  /** What its agent is doing now, while it runs (kept in the board's memory only). */
  progress?: string;
}

export interface RunListPage {
  readonly runs: RunRow[];
  /** `before` for the next page; null when there is nothing more. */
  readonly next: string | null;
  /** The page stopped at the history's scan budget: older runs may still match (follow `next`). */
  readonly partial: boolean;
}

export const DEFAULT_LIST_LIMIT = 25;
/** A page of whole texts ends once its texts pass this many characters (it holds one run at least). */
const WHOLE_PAGE_CHARACTERS = 8 * 1024 * 1024;
const PARAMETERS = ['lane', 'state', 'computer', 'q', 'limit', 'before', 'texts'];

/** The query of `GET /v1/runs` (without `prefix`), each parameter checked: a bad one is named with what it takes. */
export function runListQueryOf(params: URLSearchParams): RunListQuery | { error: string } {
  for (const name of params.keys()) {
    if (!PARAMETERS.includes(name))
      return { error: `GET /v1/runs takes ${PARAMETERS.join(', ')} (or prefix alone), not ${JSON.stringify(name.slice(0, 40))}` };
  }
  const given = (name: string) => {
    const value = params.get(name)?.trim();
    return value ? value : null;
  };
  const quoted = (text: string) => JSON.stringify(text.slice(0, 80));
  const state = given('state');
  if (state !== null && !(RUN_STATES as readonly string[]).includes(state))
    return { error: `state must be one of ${RUN_STATES.join(', ')}, not ${quoted(state)}` };
  for (const name of ['lane', 'computer']) {
    const id = given(name);
    if (id !== null && !isSafeId(id)) return { error: `${name} must be a ${name} id, matching ${SAFE_ID_RULE}, not ${quoted(id)}` };
  }
  const text = given('q');
  if (text !== null && text.length > MAX_SEARCH_TEXT) return { error: `q (the text searched for) must be at most ${MAX_SEARCH_TEXT} characters` };
  const limitText = given('limit');
  const limit = limitText === null ? DEFAULT_LIST_LIMIT : Number(limitText);
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_LIMIT)
    return { error: `limit must be a whole number from 1 to ${MAX_LIMIT}, not ${quoted(limitText ?? '')}` };
  const beforeText = given('before');
  const before = beforeText === null ? null : cursorOf(beforeText);
  if (before === undefined) return { error: `before must be the \`next\` of the page before, not ${quoted(beforeText ?? '')}` };
  const texts = given('texts') ?? 'excerpt';
  if (texts !== 'excerpt' && texts !== 'whole') return { error: `texts must be excerpt or whole, not ${quoted(texts)}` };
  return { lane: given('lane'), state: state as RunListQuery['state'], computer: given('computer'), text, limit, before, texts };
}

/** `live-N` or `N` (a seq), as `next` gives them; undefined for anything else. */
function cursorOf(text: string): RunCursor | undefined {
  const m = text.match(/^(live-)?(\d{1,15})$/);
  if (!m) return undefined;
  const n = Number(m[2]);
  if (m[1]) return { live: n };
  return n >= 1 ? { finished: n } : undefined;
}

function cursorText(cursor: RunCursor): string {
  return 'live' in cursor ? `live-${cursor.live}` : String(cursor.finished);
}

export interface ListingSources {
  /** Reads the board's state (the board actor's). */
  readonly board: <T>(read: (state: BoardState) => T) => Promise<T>;
  readonly store: Pick<EventStore, 'headSeq' | 'readAll' | 'readEntity'>;
  /** What a run's agent is doing now, if the board heard. */
  readonly progress: (runId: string) => string | null;
}

/** A page of the board's runs (see the top of this file). */
export async function listRuns(sources: ListingSources, query: RunListQuery): Promise<RunListPage> {
  const rows: RunRow[] = [];
  const wantsLive = query.state === null || (LIVE_STATES as readonly string[]).includes(query.state);
  const wantsFinished = query.state === null || (FINISHED_STATES as readonly string[]).includes(query.state);
  if (wantsLive && (query.before === null || 'live' in query.before)) {
    const below = query.before !== null && 'live' in query.before ? query.before.live : Number.POSITIVE_INFINITY;
    const live = await sources.board((state) => liveRuns(state, query, below));
    for (const { runId } of live.slice(0, query.limit)) {
      rows.push(rowOf(runRecordOf(runId, await sources.store.readEntity(`run:${runId}`)), query.texts, sources.progress(runId)));
    }
    // A page full of live runs goes on among the live runs; otherwise the finished ones fill the rest.
    if (live.length > query.limit) return { runs: rows, next: cursorText({ live: live[query.limit - 1]!.order }), partial: false };
    if (rows.length === query.limit) return { runs: rows, next: wantsFinished ? cursorText({ live: live.at(-1)!.order }) : null, partial: false };
  }
  if (!wantsFinished) return { runs: rows, next: null, partial: false };
  const found = await historyRuns(
    sources.store,
    {
      state: query.state,
      lane: query.lane,
      computer: query.computer,
      text: query.text,
      before: query.before !== null && 'finished' in query.before ? query.before.finished : null,
      limit: query.limit - rows.length,
    },
    query.texts === 'whole' ? WHOLE_PAGE_CHARACTERS : Number.POSITIVE_INFINITY,
  );
  // A run that finished between the read of the live runs and the read of the log is shown once, finished.
  const finished = new Set(found.runs.map(({ record }) => record.runId));
  const runs = [...rows.filter((row) => !finished.has(row.run_id)), ...found.runs.map(({ record }) => rowOf(record, query.texts, null))];
  return { runs, next: found.next === null ? null : cursorText({ finished: found.next }), partial: found.partial };
}

/** The live runs the query wants, newest submitted first, below a submission order. */
function liveRuns(state: BoardState, query: RunListQuery, below: number): { runId: string; order: number }[] {
  const runs: { runId: string; order: number }[] = [];
  const text = query.text?.toLowerCase() ?? null;
  for (const run of Object.values(state.runs)) {
    if (isTerminal(run.state) || run.submittedOrder >= below) continue;
    if (query.state !== null && run.state !== query.state) continue;
    if (query.lane !== null && run.lane !== query.lane) continue;
    if (query.computer !== null && run.computerId !== query.computer) continue;
    if (text !== null && ![run.prompt, run.reply].some((t) => t?.toLowerCase().includes(text))) continue;
    runs.push({ runId: run.runId, order: run.submittedOrder });
  }
  return runs.sort((a, b) => b.order - a.order);
}

/** A run's row, from its record; `progress` while it runs. */
export function rowOf(record: RunRecord, texts: RunListQuery['texts'], progress: string | null): RunRow {
  const text = (value: string | null) => (value === null ? null : texts === 'whole' ? value : excerpt(value));
  const time = (at: number | null) => (at === null ? null : new Date(at).toISOString());
  const state = record.state ?? 'queued';
  const usage = usageToWire(record.usage);
  const duration = durationOf(record);
  const fields: [keyof RunRow, unknown][] = [
    ['computer_id', record.computer],
    ['submitted_at', time(record.submittedAt)],
    ['claimed_at', time(record.claimedAt)],
    ['started_at', time(record.processBeganAt ?? record.startedAt)],
    ['finished_at', time(record.finishedAt)],
    ['duration_ms', duration],
    ['usage', usage],
    ['changes', record.changes === null ? null : changesToWire(record.changes)],
    ['prompt', text(record.prompt) ?? ''],
    ['reply', text(record.reply)],
    ['error', text(record.error)],
    ['progress', isTerminal(state as RunState) ? null : progress],
  ];
  const row: Record<string, unknown> = { run_id: record.runId, lane: record.lane, state };
  for (const [name, value] of fields) if (value !== null && value !== undefined) row[name] = value;
  return row as unknown as RunRow;
}
