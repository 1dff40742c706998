import { loginOf } from '../actors/lane/queueState.ts';
import type { DomainEvent } from '../events/catalog.ts';
import type { Usage } from '../events/usage.ts';
import { USAGE_FIELDS } from '../events/usageFields.ts';
import { roundCost } from '../events/usageWords.ts';
import type { Projection } from './projection.ts';

/** What runs cost, summed: how many reported a usage, and the sum of each field they reported. */
export interface UsageTally {
  runs: number;
  /**
   * How many of them reported a cost: an agent that reports tokens only (Codex) adds nothing to
   * `costUsd`, and a sum of no costs is unknown, not $0.
   */
  costRuns: number;
  costUsd: number;
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
}

export interface UsageHour {
  lanes: Record<string, UsageTally>;
  logins: Record<string, UsageTally>;
}

/**
 * Usage as the board's completions reported it (docs/rules.md#wire-and-cli `usage`): totals per login since the log
 * began (the `/metrics` counters), and per hour, per lane and per login, for the last day only, so that
 * `status` answers "over the last day" by adding at most 24 buckets: nothing is written for it and
 * nothing is scanned. A run's lane and login are read from its queuing and kept only until it ends.
 */
export interface UsageState {
  logins: Record<string, UsageTally>;
  /** By the hour's start (ms since the epoch): the current hour and the 23 before it are kept. */
  hours: Record<string, UsageHour>;
  /** Runs not yet ended: `[lane, login]`. */
  open: Record<string, [string, string]>;
  /** How many usages were folded: a last day computed for the same count and hour is still true. */
  counted: number;
}

export const HOUR_MS = 3_600_000;
/** "The last day": the hour `at` falls in and the 23 before it. */
export const DAY_HOURS = 24;

export function emptyTally(): UsageTally {
  return { runs: 0, costRuns: 0, costUsd: 0, inputTokens: 0, outputTokens: 0, cachedInputTokens: 0 };
}

function add(tally: UsageTally, usage: Usage): void {
  tally.runs++;
  if (usage.costUsd !== undefined) tally.costRuns++;
  for (const field of USAGE_FIELDS) tally[field] += usage[field] ?? 0;
}

function addInto(into: Record<string, UsageTally>, key: string, usage: Usage): void {
  add((into[key] ??= emptyTally()), usage);
}

const hourOf = (at: number) => Math.floor(at / HOUR_MS) * HOUR_MS;

export const usageProjection: Projection<UsageState> = {
  name: 'usage',
  // 2: tallies count the runs that reported a cost (`costRuns`).
  version: 2,
  initial: () => ({ logins: {}, hours: {}, open: {}, counted: 0 }),
  evolve(state, event: DomainEvent) {
    switch (event.type) {
      case 'board.run.queued':
        state.open[event.data.runId] = [event.data.lane, loginOf(event.data)];
        break;
      case 'board.run.finished': {
        const run = state.open[event.data.runId];
        delete state.open[event.data.runId];
        const { usage } = event.data;
        if (!usage || !run) break;
        const [lane, login] = run;
        state.counted++;
        addInto(state.logins, login, usage);
        const hour = hourOf(event.at);
        const bucket = (state.hours[hour] ??= { lanes: {}, logins: {} });
        addInto(bucket.lanes, lane, usage);
        addInto(bucket.logins, login, usage);
        // Hours that left the last day go as the log moves on: at most 24 buckets are kept.
        for (const key of Object.keys(state.hours)) if (Number(key) <= hour - DAY_HOURS * HOUR_MS) delete state.hours[key];
        break;
      }
      case 'board.run.resolved':
      case 'board.run.cancelled':
        delete state.open[event.data.runId];
        break;
      default:
        break;
    }
    return state;
  },
};

/** The last day's usage as of `at`, per lane and per login, and from when it counts. */
export interface LastDayUsage {
  readonly since: number;
  /** The costliest lanes, at most LANES_SHOWN of them; `moreLanes` says how many more had a usage. */
  readonly lanes: Record<string, UsageTally>;
  readonly moreLanes: number;
  readonly logins: Record<string, UsageTally>;
}

/** A status or a board page names this many lanes at most: a board of 10,000 busy lanes is summed, not listed. */
export const LANES_SHOWN = 50;

/**
 * The last one computed, for the same state, count and hour: the board page asks four times a second,
 * and the answer changes only when a usage is folded or the hour turns.
 */
let cached: { state: UsageState; counted: number; hour: number; usage: LastDayUsage } | null = null;

export function lastDayUsage(state: UsageState, at: number): LastDayUsage {
  const hour = hourOf(at);
  if (cached && cached.state === state && cached.counted === state.counted && cached.hour === hour) return cached.usage;
  const usage = sumLastDay(state, hour);
  cached = { state, counted: state.counted, hour, usage };
  return usage;
}

function sumLastDay(state: UsageState, hour: number): LastDayUsage {
  const since = hour - (DAY_HOURS - 1) * HOUR_MS;
  const lanes: Record<string, UsageTally> = {};
  const logins: Record<string, UsageTally> = {};
  for (const [key, bucket] of Object.entries(state.hours)) {
    if (Number(key) < since) continue;
    for (const [lane, tally] of Object.entries(bucket.lanes)) merge((lanes[lane] ??= emptyTally()), tally);
    for (const [login, tally] of Object.entries(bucket.logins)) merge((logins[login] ??= emptyTally()), tally);
  }
  const costliest = Object.entries(lanes).sort(([a, x], [b, y]) => y.costUsd - x.costUsd || y.runs - x.runs || (a < b ? -1 : 1));
  return { since, lanes: Object.fromEntries(costliest.slice(0, LANES_SHOWN)), moreLanes: Math.max(0, costliest.length - LANES_SHOWN), logins };
}

function merge(into: UsageTally, tally: UsageTally): void {
  into.runs += tally.runs;
  into.costRuns += tally.costRuns;
  for (const field of USAGE_FIELDS) into[field] += tally[field];
}

/** A tally in words: `3 run(s): $0.0369, 36 in / 21 out / 9000 cached tokens`. */
export function tallyWords(tally: UsageTally): string {
  const tokens = `${tally.inputTokens} in / ${tally.outputTokens} out / ${tally.cachedInputTokens} cached tokens`;
  return `${tally.runs} run(s): ${tallyCost(tally)}, ${tokens}`;
}

/** A tally's cost: `$0.0369`, `$0.0123 (2 runs of unknown cost)`, or `cost unknown` when none reported one. */
export function tallyCost(tally: UsageTally): string {
  if (tally.costRuns === 0) return 'cost unknown';
  const unknown = tally.runs - tally.costRuns;
  return `$${roundCost(tally.costUsd)}${unknown > 0 ? ` (${unknown} run${unknown === 1 ? '' : 's'} of unknown cost)` : ''}`;
}
