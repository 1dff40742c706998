import { describe, expect, it } from 'vitest';
import { initialBoardState } from '../../actors/board/boardState.ts';
import type { DomainEvent } from '../../events/catalog.ts';
import { formatStatus, statusView } from '../../projections/statusView.ts';
import { HOUR_MS, LANES_SHOWN, lastDayUsage, type UsageState, usageProjection } from '../../projections/usage.ts';

let seq = 0;
const event = (type: string, data: Record<string, unknown>, at: number) =>
  ({ seq: ++seq, stream: `run:${data.runId}`, version: 0, type, data, at, cause: null, actor: 'test' }) as unknown as DomainEvent;
const queued = (runId: string, lane: string, agentId: string | null, at: number) =>
  event('board.run.queued', { runId, lane, prompt: 'p', agentId, timeoutS: null, submittedOrder: seq }, at);
const finished = (runId: string, at: number, usage?: Record<string, number>) =>
  event('board.run.finished', { runId, computerId: 'c1', state: 'succeeded', reason: 'completed: succeeded', ...(usage ? { usage } : {}) }, at);

function fold(events: DomainEvent[]): UsageState {
  return events.reduce((state, e) => usageProjection.evolve(state, e), usageProjection.initial());
}

/** `status` over the last day, from hourly buckets (no log scan); `/metrics` totals per login since the log began. */
describe('the usage projection', () => {
  const day0 = Date.UTC(2026, 11, 1, 0, 0, 0);

  it('sums per login and per lane; the last day is the current hour and the 23 before it', () => {
    const state = fold([
      queued('r1', 'alice', null, day0),
      finished('r1', day0 + 10 * 60_000, { costUsd: 0.5, inputTokens: 10 }),
      queued('r2', 'bob', 'team', day0 + HOUR_MS),
      finished('r2', day0 + HOUR_MS + 5, { costUsd: 0.25, outputTokens: 3, cachedInputTokens: 100 }),
      queued('r3', 'alice', 'team', day0 + 2 * HOUR_MS),
      // An older computer, or a plain agent: no usage, nothing counted.
      finished('r3', day0 + 2 * HOUR_MS + 5),
    ]);
    expect(state.logins).toEqual({
      default: { runs: 1, costRuns: 1, costUsd: 0.5, inputTokens: 10, outputTokens: 0, cachedInputTokens: 0 },
      team: { runs: 1, costRuns: 1, costUsd: 0.25, inputTokens: 0, outputTokens: 3, cachedInputTokens: 100 },
    });
    expect(state.open).toEqual({});
    const soon = lastDayUsage(state, day0 + 3 * HOUR_MS);
    expect(soon.since).toBe(day0 + 3 * HOUR_MS - 23 * HOUR_MS);
    expect(soon.lanes.alice?.costUsd).toBe(0.5);
    expect(soon.logins.team?.runs).toBe(1);
    // 23 hours and a bit after the first hour ends: the first hour has left the day, the second not yet.
    const later = lastDayUsage(state, day0 + 24 * HOUR_MS + 1);
    expect(later.logins).toEqual({ team: { runs: 1, costRuns: 1, costUsd: 0.25, inputTokens: 0, outputTokens: 3, cachedInputTokens: 100 } });
    expect(later.lanes).toEqual({ bob: later.logins.team });
  });

  it('keeps at most a day of hours, and no run once it ended (resolved and cancelled runs too)', () => {
    const events: DomainEvent[] = [];
    for (let hour = 0; hour < 100; hour++) {
      events.push(queued(`r${hour}`, `lane-${hour}`, null, day0 + hour * HOUR_MS));
      events.push(finished(`r${hour}`, day0 + hour * HOUR_MS + 1, { costUsd: 1 }));
    }
    events.push(
      queued('gone', 'x', null, day0),
      event('board.run.resolved', { runId: 'gone', computerId: 'c1', lastHeartbeatAt: 0, reason: 'r' }, day0),
    );
    events.push(queued('cut', 'x', null, day0), event('board.run.cancelled', { runId: 'cut', offeredTo: [], reason: 'r' }, day0));
    const state = fold(events);
    expect(Object.keys(state.hours)).toHaveLength(24);
    expect(state.open).toEqual({});
    expect(state.logins.default).toMatchObject({ runs: 100, costUsd: 100 });
    expect(lastDayUsage(state, day0 + 99 * HOUR_MS).logins.default?.runs).toBe(24);
  });

  it('names the costliest lanes only, saying how many more had a usage; the same answer again until a usage is folded or the hour turns', () => {
    const events: DomainEvent[] = [];
    for (let i = 0; i < LANES_SHOWN + 10; i++) events.push(queued(`q${i}`, `lane-${i}`, null, day0), finished(`q${i}`, day0 + 1, { costUsd: i }));
    const state = fold(events);
    const day = lastDayUsage(state, day0 + 2);
    expect(Object.keys(day.lanes)).toHaveLength(LANES_SHOWN);
    expect(Object.keys(day.lanes)[0]).toBe(`lane-${LANES_SHOWN + 9}`);
    expect(day.moreLanes).toBe(10);
    expect(lastDayUsage(state, day0 + 3)).toBe(day);
    expect(formatStatus(statusView(initialBoardState(), {}, day0 + 2, state))).toContain(`  and 10 more lane(s)`);
    usageProjection.evolve(state, queued('late', 'lane-0', null, day0 + 4));
    usageProjection.evolve(state, finished('late', day0 + 5, { costUsd: 1000 }));
    expect(Object.keys(lastDayUsage(state, day0 + 6).lanes)[0]).toBe('lane-0');
  });
});
