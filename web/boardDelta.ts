import type { BoardSnapshot } from './boardSnapshot.ts';

/** The board page's fields sent whole when they change. */
const FIELDS = ['counts', 'more', 'stuck', 'longestWait', 'usage'] as const;

/** The board page's lists, each item named by a key; the page's reader (static/boardModel.js) names them alike. */
const LISTS = {
  lanes: (lane: BoardSnapshot['lanes'][number]) => lane.lane,
  claims: (claim: BoardSnapshot['claims'][number]) => claim.runId,
  sessions: (session: BoardSnapshot['sessions'][number]) => `${session.computer}\n${session.lane}`,
  computers: (computer: BoardSnapshot['computers'][number]) => computer.id,
} as const;

type ListName = keyof typeof LISTS;

/** One list's change: items added or changed, keys removed, and the keys' new order when it is not the old one with those removed. */
export interface ListChange<T> {
  readonly put?: T[];
  readonly drop?: string[];
  readonly order?: string[];
}

/** What changed from one view of the board page to the next; applied by the page's boardModel.js. */
export type BoardDelta = {
  at: number;
  set?: Partial<Pick<BoardSnapshot, (typeof FIELDS)[number]>>;
} & { [L in ListName]?: ListChange<BoardSnapshot[L][number]> };

/**
 * The delta from `before` to `after`, or null when nothing but the time changed. It is as large as
 * what changed, and no larger than `after`, which is page-sized whatever the board holds.
 */
export function boardDelta(before: BoardSnapshot, after: BoardSnapshot): BoardDelta | null {
  const delta: BoardDelta = { at: after.at };
  let changed = false;
  for (const field of FIELDS) {
    if (JSON.stringify(before[field]) === JSON.stringify(after[field])) continue;
    delta.set = { ...delta.set, [field]: after[field] };
    changed = true;
  }
  for (const name of Object.keys(LISTS) as ListName[]) {
    const change = listChange(before[name], after[name], LISTS[name] as (item: unknown) => string);
    if (change === null) continue;
    (delta as Record<string, unknown>)[name] = change;
    changed = true;
  }
  return changed ? delta : null;
}

function listChange<T>(before: readonly T[], after: readonly T[], keyOf: (item: T) => string): ListChange<T> | null {
  const old = new Map(before.map((item) => [keyOf(item), JSON.stringify(item)]));
  const keys = after.map(keyOf);
  const put = after.filter((item, i) => old.get(keys[i]!) !== JSON.stringify(item));
  const kept = new Set(keys);
  const drop = [...old.keys()].filter((key) => !kept.has(key));
  // The page keeps its order with the dropped keys removed; a new key or a move needs the new order.
  const remaining = before.map(keyOf).filter((key) => kept.has(key));
  const moved = remaining.length !== keys.length || remaining.some((key, i) => key !== keys[i]);
  if (put.length === 0 && drop.length === 0 && !moved) return null;
  return { ...(put.length ? { put } : {}), ...(drop.length ? { drop } : {}), ...(moved ? { order: keys } : {}) };
}
