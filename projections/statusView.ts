import type { BoardState } from '../actors/board/boardState.ts';
import type { QueueState } from '../actors/lane/queueState.ts';
import { isParked, limitOf } from '../actors/lane/queueState.ts';
import { type LastDayUsage, lastDayUsage, tallyWords, type UsageState } from './usage.ts';

export interface StatusView {
  readonly at: number;
  readonly board: {
    readonly connected: string[];
    readonly lanes: Record<string, { queued: string[]; open: string | null; waiting: string[] }>;
    readonly openClaims: { runId: string; computerId: string; claimedAt: number }[];
  };
  readonly computers: Record<
    string,
    {
      slots: number;
      inUse: number;
      held: boolean;
      draining: boolean;
      lanes: Record<
        string,
        {
          /** `limitedUntil`: claimed, it waits out its login's usage limit until then (absent for any other run). */
          waiting: { runId: string; parkedUntil: number | null; retryAt: number | null; limitedUntil?: number }[];
          active: { runId: string; status: string } | null;
        }
      >;
      /** Logins at their usage limit: until when, in their agent's words (absent: none). */
      limits?: Record<string, { until: number; words: string }>;
    }
  >;
  /** What runs cost over the last day, per lane and per login (absent from older boards). */
  readonly usage?: LastDayUsage;
}

/** What `runledger status` shows: per lane, queued, parked (until when), claiming and running runs; open claims. */
export function statusView(board: BoardState, queues: Record<string, QueueState>, at: number, usage?: UsageState): StatusView {
  const lanes: StatusView['board']['lanes'] = {};
  for (const [lane, queue] of Object.entries(board.lanes)) {
    if (queue.unclaimed.length === 0 && queue.holder === null) continue;
    lanes[lane] = { queued: [...queue.unclaimed], open: queue.holder, waiting: [...queue.waiters] };
  }
  const openClaims = Object.keys(board.open).map((runId) => {
    const run = board.runs[runId]!;
    return { runId, computerId: run.computerId ?? '?', claimedAt: run.claimedAt ?? 0 };
  });
  const computers = computersStatus(queues, at);
  return { at, board: { connected: [...board.connected], lanes, openClaims }, computers, ...(usage ? { usage: lastDayUsage(usage, at) } : {}) };
}

/** Each computer's side of the status: its slots and, lane by lane, its active run and those waiting (and why). */
export function computersStatus(queues: Record<string, QueueState>, at: number): StatusView['computers'] {
  const computers: StatusView['computers'] = {};
  for (const [computer, queue] of Object.entries(queues)) {
    const view: StatusView['computers'][string] = { slots: queue.slots, inUse: queue.inUse, held: queue.held, draining: queue.draining, lanes: {} };
    for (const [lane, q] of Object.entries(queue.lanes)) {
      const active = q.active === null ? null : { runId: q.active, status: queue.runs[q.active]?.status ?? '?' };
      view.lanes[lane] = {
        active,
        waiting: q.waiting.map((runId) => {
          const run = queue.runs[runId]!;
          if (run.claimHeld) return { runId, parkedUntil: null, retryAt: null, limitedUntil: run.notBefore };
          return {
            runId,
            parkedUntil: isParked(run, at) ? run.notBefore : null,
            retryAt: run.busyWaits === 0 && run.notBefore > at ? run.notBefore : null,
          };
        }),
      };
    }
    const limits = Object.keys(queue.loginLimits ?? {}).flatMap((login) => {
      const limit = limitOf(queue, login, at);
      return limit ? [[login, { until: limit.until, words: limit.words }] as const] : [];
    });
    if (limits.length) view.limits = Object.fromEntries(limits);
    computers[computer] = view;
  }
  return computers;
}

/** The status as lines a person reads at a glance. */
export function formatStatus(view: StatusView): string {
  const lines: string[] = [];
  const secs = (t: number) => `${Math.max(0, Math.ceil((t - view.at) / 1000))} s`;
  lines.push(
    `board: ${view.board.connected.length} computer(s) connected${view.board.connected.length ? ` (${view.board.connected.join(', ')})` : ''}, ${view.board.openClaims.length} open claim(s)`,
  );
  for (const claim of view.board.openClaims) lines.push(`  claim ${claim.runId} held by ${claim.computerId}`);
  for (const [lane, l] of Object.entries(view.board.lanes)) {
    lines.push(`  lane ${lane}: ${l.open ? `turn ${l.open} open` : 'no open turn'}${l.queued.length ? `, queued ${l.queued.join(' ')}` : ''}`);
  }
  for (const [computer, c] of Object.entries(view.computers)) {
    lines.push(`computer ${computer}: ${c.inUse}/${c.slots} slot(s) in use${c.held ? ', held' : ''}${c.draining ? ', draining' : ''}`);
    for (const [lane, l] of Object.entries(c.lanes)) {
      const parts = [
        ...(l.active ? [`${l.active.status} ${l.active.runId}`] : []),
        ...l.waiting.map((w) =>
          w.limitedUntil !== undefined
            ? `waiting out its login's usage limit ${w.runId} (runs again in ${secs(w.limitedUntil)})`
            : w.parkedUntil !== null
              ? `parked ${w.runId} (claim again in ${secs(w.parkedUntil)})`
              : w.retryAt !== null
                ? `retrying ${w.runId} in ${secs(w.retryAt)}`
                : `queued ${w.runId}`,
        ),
      ];
      lines.push(`  lane ${lane}: ${parts.join(', ') || 'idle'}`);
    }
    for (const [login, limit] of Object.entries(c.limits ?? {})) {
      lines.push(
        `  login ${login}: at its usage limit until ${new Date(limit.until).toISOString()} (in ${secs(limit.until)}), starts nothing: “${limit.words}”`,
      );
    }
  }
  lines.push(...usageLines(view.usage));
  return lines.join('\n');
}

/** The last day's usage, per login then per lane; nothing when no run of the day reported one. */
function usageLines(usage: LastDayUsage | undefined): string[] {
  const logins = Object.entries(usage?.logins ?? {});
  if (!usage || logins.length === 0) return [];
  const since = new Date(usage.since).toISOString().slice(11, 16);
  return [
    `usage over the last day (since ${since} UTC):`,
    ...logins.map(([login, tally]) => `  login ${login}: ${tallyWords(tally)}`),
    ...Object.entries(usage.lanes).map(([lane, tally]) => `  lane ${lane}: ${tallyWords(tally)}`),
    ...(usage.moreLanes > 0 ? [`  and ${usage.moreLanes} more lane(s)`] : []),
  ];
}
