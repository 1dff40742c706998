/**
 * A login's usage or rate limit, as Claude Code and Codex say it (docs/rules.md#computer-behaviour, "Execution"): the
 * agent's words and, where they say, when it resets. Pure: the time "now" and the machine's time zone
 * (the CLIs print wall-clock times in it) are given, the zone as a function, asked only for words that
 * give a wall-clock time: a process's first reading of it costs ~20 ms of CPU (Intl's zone data),
 * which every agent's exit paid, limit or none. The daemon records what is read here with the run's
 * exit, so a replay reads the recorded `resetAt`, never the text again.
 *
 * The forms, as the CLIs print them (taken from their issue trackers and sources):
 * - Claude Code 1.0.x, print mode's `result`: "Claude AI usage limit reached|1755615600" (epoch
 *   seconds; anthropics/claude-code#6119, #1328), shown in its UI as "Claude usage limit reached. Your
 *   limit will reset at 5pm (Europe/Warsaw)." or "... reset at Oct 6, 6pm." (#8638).
 * - Claude Code 1.0.8x–2.0: "5-hour limit reached ∙ resets 5am" (#6392, #7641), local time, no zone.
 * - Claude Code 2.1.x: "You've hit your limit · resets 2pm (Asia/Shanghai)", "You've hit your
 *   session limit · resets 12:50am (America/Los_Angeles)" (#74079), with a stream-json
 *   `rate_limit_event` whose `rate_limit_info` is `{status: "rejected", resetsAt: <epoch s>}` (read
 *   by the Claude reader; `status: "allowed"` is only information).
 * - An API key at its limit: "This request would exceed your account's rate limit. Please try again
 *   later." (429 rate_limit_error, no time), "You have reached your specified API usage limits. You
 *   will regain access on 2026-04-01 at 00:00 UTC." (#38035).
 * - Codex (codex-rs/core/src/error.rs, UsageLimitReachedError): "You've hit your usage limit. Try
 *   again at 3:15 PM." or "... or try again at Jul 5th, 2026 8:19 PM." (local time; openai/codex#26668),
 *   "... Try again later." with no time; 0.27–0.40 said "... or try again in 5 days 22 hours 11
 *   minutes." (#3899, #3031); 0.23 "... or wait for limits to reset (every 5h and every week.)" (#2669).
 * - The ChatGPT backend's own answer, when a Codex error carries it: `usage_limit_reached` with
 *   `resets_at` (epoch s) or `resets_in_seconds`.
 * Codex's "Quota exceeded. Check your plan and billing details." and "To use Codex with your ChatGPT
 * plan, upgrade to Plus" are not limits that time lifts: they stay ordinary failures.
 */
export interface UsageLimit {
  /** The agent's own words, cut to a line or two. */
  readonly words: string;
  /** When the agent says the limit resets (ms); absent when it does not say. */
  readonly resetAt?: number;
}

/** The agent's words are kept to this many characters. */
export const LIMIT_WORDS_CHARS = 300;
/** A reset further ahead than this is not believed (a misread date): the wait falls back to doubling. */
const MAX_AHEAD_MS = 31 * 24 * 3_600_000;
/** A time of day (no date) this far past is the same reset said again, not that time tomorrow. */
const JUST_PASSED_MS = 3_600_000;

const SAYS_LIMIT: readonly RegExp[] = [
  /claude ai usage limit reached/i,
  /usage limit reached/i,
  /\blimit reached\s*[∙·•|-]\s*resets/i,
  /you(?:'|’)ve hit your (?:\w+ )?limit/i,
  /\busage_limit_reached\b/,
  /exceed your account(?:'|’)s rate limit/i,
  /reached your specified api usage limits/i,
];

/** The first line of `text` that says a usage limit was reached, read with its reset time; or null. */
export function usageLimitIn(text: string, now: number, timeZone: () => string): UsageLimit | null {
  if (!text) return null;
  const lines = text.split(/\r?\n/);
  const at = lines.findIndex((line) => SAYS_LIMIT.some((form) => form.test(line)));
  if (at === -1) return null;
  // The reset may be on the next line (a wrapped terminal line), unless that line says it all again.
  const next = lines[at + 1]?.trim() ?? '';
  const wrapped = next && !SAYS_LIMIT.some((form) => form.test(next)) ? ` ${next}` : '';
  const said = `${lines[at]!.trim()}${wrapped}`;
  const resetAt = resetIn(said, now, timeZone);
  return { words: wordsOf(said), ...(resetAt === null ? {} : { resetAt }) };
}

/** A reset time the agent gave as data (an epoch in seconds), kept when it is believable. */
export function believableReset(epochMs: number, now: number): number | null {
  return Number.isFinite(epochMs) && epochMs > now && epochMs - now <= MAX_AHEAD_MS ? Math.round(epochMs) : null;
}

function wordsOf(said: string): string {
  // Claude 1.0's machine form puts the epoch after a bar: the person reads the sentence.
  const plain = said.replace(/(usage limit reached)\|\d{9,11}/i, '$1').replace(/\s+/g, ' ');
  return plain.length > LIMIT_WORDS_CHARS ? `${plain.slice(0, LIMIT_WORDS_CHARS - 1)}…` : plain;
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/** When the words say the limit resets, or null. */
function resetIn(said: string, now: number, timeZone: () => string): number | null {
  const epoch = /limit reached\|(\d{9,11})\b/i.exec(said) ?? /"resets_at"\s*:\s*(\d{9,11})/.exec(said);
  if (epoch) return believableReset(Number(epoch[1]) * 1000, now);
  const seconds = /"resets_in_seconds"\s*:\s*(\d+)/.exec(said);
  if (seconds) return believableReset(now + Number(seconds[1]) * 1000, now);
  // Codex 0.27–0.40: "try again in 2 days 3 hours 14 minutes".
  const inDuration = /try again in ((?:\d+\s*(?:days?|hours?|minutes?|seconds?)[\s,]*(?:and\s+)?)+)/i.exec(said);
  if (inDuration) return believableReset(now + durationMs(inDuration[1]!), now);
  // "You will regain access on 2026-04-01 at 00:00 UTC."
  const iso = /regain access on (\d{4})-(\d{2})-(\d{2}) at (\d{1,2}):(\d{2}) UTC/i.exec(said);
  if (iso) return believableReset(Date.UTC(+iso[1]!, +iso[2]! - 1, +iso[3]!, +iso[4]!, +iso[5]!), now);
  // Codex: "try again at 3:15 PM" or "try again at Jul 5th, 2026 8:19 PM" (the machine's local time).
  const codexAt = /try again at (?:([A-Za-z]{3})[a-z]* (\d{1,2})(?:st|nd|rd|th)?,? (\d{4}),? )?(\d{1,2}):(\d{2}) ?([AP]M)/i.exec(said);
  if (codexAt) {
    const [, month, day, year, hour, minute, half] = codexAt;
    const date = month ? { month: MONTHS.indexOf(month.toLowerCase()), day: +day!, year: +year! } : null;
    return wallClock(now, timeZone(), date, hour12(+hour!, half!), +minute!);
  }
  // Claude: "resets 5am", "resets 12:50am (America/Los_Angeles)", "reset at 5pm (Europe/Warsaw)", "reset at Oct 6, 6pm".
  const claudeAt =
    /resets?(?: at)? (?:([A-Za-z]{3})[a-z]* (\d{1,2}),? (?:at )?)?(\d{1,2})(?::(\d{2}))? ?([ap]m)\b(?:\s*\(([A-Za-z_]+(?:\/[A-Za-z0-9_+-]+)*)\))?/i.exec(
      said,
    );
  if (claudeAt) {
    const [, month, day, hour, minute, half, zone] = claudeAt;
    const date = month ? { month: MONTHS.indexOf(month.toLowerCase()), day: +day!, year: null } : null;
    return wallClock(now, zone && isZone(zone) ? zone : timeZone(), date, hour12(+hour!, half!), minute ? +minute : 0);
  }
  return null;
}

function durationMs(words: string): number {
  const unit: Record<string, number> = { day: 86_400_000, hour: 3_600_000, minute: 60_000, second: 1_000 };
  let total = 0;
  for (const [, count, name] of words.matchAll(/(\d+)\s*(day|hour|minute|second)s?/gi)) total += Number(count) * unit[name!.toLowerCase()]!;
  return total;
}

function hour12(hour: number, half: string): number {
  const pm = half.toLowerCase() === 'pm';
  return (hour % 12) + (pm ? 12 : 0);
}

/**
 * The end of the next minute after `now` whose wall clock in `timeZone` reads `hour:minute` (on `date`
 * when given, the year too when given; otherwise today, or tomorrow when today's is long past), or null.
 */
function wallClock(
  now: number,
  timeZone: string,
  date: { month: number; day: number; year: number | null } | null,
  hour: number,
  minute: number,
): number | null {
  if (date && date.month < 0) return null;
  const today = partsIn(now, timeZone);
  if (!today) return null;
  // The CLIs cut the reset to its minute (Codex prints %-I:%M): woken at the minute's start, the run would
  // meet the limit again. It has lifted by the minute's end.
  const endOf = (at: number | null) => (at === null ? null : at + 60_000);
  if (date) {
    const years = date.year === null ? [today.year, today.year + 1] : [date.year];
    for (const year of years) {
      const at = endOf(instantOf(timeZone, year, date.month, date.day, hour, minute));
      const believed = at === null ? null : believableReset(at, now);
      if (believed !== null) return believed;
    }
    return null;
  }
  const todayAt = endOf(instantOf(timeZone, today.year, today.month, today.day, hour, minute));
  if (todayAt === null) return null;
  if (todayAt > now) return believableReset(todayAt, now);
  // Said again just after it passed (the run was woken at the reset, the CLI a little behind): the
  // limit is lifting now, not at that time tomorrow. No time is believed: the wait falls back to doubling.
  if (now - todayAt <= JUST_PASSED_MS) return null;
  const tomorrowAt = endOf(instantOf(timeZone, today.year, today.month, today.day + 1, hour, minute));
  return tomorrowAt !== null && tomorrowAt > now ? believableReset(tomorrowAt, now) : null;
}

function isZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

interface WallParts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
}

function partsIn(instant: number, timeZone: string): WallParts | null {
  try {
    const parts = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
    }).formatToParts(instant);
    const get = (type: string) => Number(parts.find((part) => part.type === type)?.value);
    return { year: get('year'), month: get('month') - 1, day: get('day'), hour: get('hour'), minute: get('minute') };
  } catch {
    return null;
  }
}

/** The instant whose wall clock in `timeZone` reads the given time (days past the month's end roll over). */
function instantOf(timeZone: string, year: number, month: number, day: number, hour: number, minute: number): number | null {
  const wall = Date.UTC(year, month, day, hour, minute);
  let guess = wall;
  // Twice: the zone's offset at the guess may differ from the one at the answer (a DST change).
  for (let i = 0; i < 2; i++) {
    const parts = partsIn(guess, timeZone);
    if (!parts) return null;
    const offset = Date.UTC(parts.year, parts.month, parts.day, parts.hour, parts.minute) - Math.floor(guess / 60_000) * 60_000;
    guess = wall - offset;
  }
  return guess;
}
