/**
 * The usage and rate limits Claude Code and Codex print (see actors/run/usageLimit.ts for where each
 * form was seen), read into the agent's words and, where they say, when the limit resets.
 */
import { describe, expect, it } from 'vitest';
import { usageLimitIn } from '../../actors/run/usageLimit.ts';
import { claudeStreamJsonReader, codexJsonReader, plainReader } from '../../adapters/agent/outputReaders.ts';

// Thursday 2026-01-01 10:00 UTC = 11:00 in Berlin, 02:00 in Los Angeles.
const NOW = Date.UTC(2026, 0, 1, 10, 0);
const at = (iso: string) => Date.parse(iso);
const read = (text: string, zone = 'UTC') => usageLimitIn(text, NOW, () => zone);

describe('usage limits as Claude Code says them', () => {
  it('1.0.x print mode: "Claude AI usage limit reached|<epoch s>" resets at that epoch, said without the number', () => {
    expect(read('Claude AI usage limit reached|1767265200')).toEqual({ words: 'Claude AI usage limit reached', resetAt: 1767265200_000 });
  });

  it('"Your limit will reset at 5pm (Europe/Warsaw)": that wall clock in that zone, today', () => {
    expect(read('Claude usage limit reached. Your limit will reset at 5pm (Europe/Warsaw).')?.resetAt).toBe(at('2026-01-01T16:01:00Z'));
  });

  it('"reset at Oct 6, 6pm": that day, the next one ahead', () => {
    expect(read('Claude usage limit reached. Your limit will reset at Jan 6, 6pm.', 'Europe/Berlin')?.resetAt).toBe(at('2026-01-06T17:01:00Z'));
  });

  it('"5-hour limit reached ∙ resets 5am": the next 5am in the machine’s zone (tomorrow when it has passed)', () => {
    expect(read('5-hour limit reached ∙ resets 5am', 'Europe/Berlin')?.resetAt).toBe(at('2026-01-02T04:01:00Z'));
    expect(read('5-hour limit reached ∙ resets 12pm', 'Europe/Berlin')?.resetAt).toBe(at('2026-01-01T11:01:00Z'));
  });

  it('2.1.x: "You’ve hit your session limit · resets 12:50am (America/Los_Angeles)"', () => {
    const limit = read('You’ve hit your session limit · resets 12:50am (America/Los_Angeles)');
    expect(limit).toEqual({ words: 'You’ve hit your session limit · resets 12:50am (America/Los_Angeles)', resetAt: at('2026-01-02T08:51:00Z') });
    expect(read("You've hit your limit · resets 2pm (Asia/Shanghai)")?.resetAt).toBe(at('2026-01-02T06:01:00Z'));
  });

  it('an API key at its rate limit says no time; one at its spend limit says the day, in UTC', () => {
    expect(read("This request would exceed your account's rate limit. Please try again later.")).toEqual({
      words: "This request would exceed your account's rate limit. Please try again later.",
    });
    expect(read('You have reached your specified API usage limits. You will regain access on 2026-01-08 at 00:00 UTC.')?.resetAt).toBe(
      at('2026-01-08T00:00:00Z'),
    );
  });

  it('the stream-json reader: a failed result with the limit, or a rejected rate_limit_event whose resetsAt wins', () => {
    const reader = claudeStreamJsonReader();
    reader.push(
      `${JSON.stringify({ type: 'rate_limit_event', rate_limit_info: { status: 'rejected', resetsAt: 1767276000, rateLimitType: 'five_hour' } })}\n`,
    );
    reader.push(
      `${JSON.stringify({ type: 'result', subtype: 'success', is_error: true, result: "You've hit your limit · resets 2pm (Asia/Shanghai)" })}\n`,
    );
    reader.end();
    expect(reader.usageLimit({ now: NOW, timeZone: () => 'UTC', stderr: '' })).toEqual({
      words: "You've hit your limit · resets 2pm (Asia/Shanghai)",
      resetAt: 1767276000_000,
    });
  });

  it('a turn that succeeded is no limit, whatever its answer says; an allowed rate_limit_event is information only', () => {
    const reader = claudeStreamJsonReader();
    reader.push(`${JSON.stringify({ type: 'rate_limit_event', rate_limit_info: { status: 'allowed', resetsAt: 1767276000 } })}\n`);
    reader.push(`${JSON.stringify({ type: 'result', subtype: 'success', is_error: false, result: 'Claude usage limit reached, you said?' })}\n`);
    reader.end();
    expect(reader.usageLimit({ now: NOW, timeZone: () => 'UTC', stderr: '' })).toBeNull();
  });

  it('a CLI that died before its result said it on stderr', () => {
    const reader = claudeStreamJsonReader();
    reader.end();
    expect(reader.usageLimit({ now: NOW, timeZone: () => 'UTC', stderr: 'Error: Claude AI usage limit reached|1767265200\n' })?.resetAt).toBe(
      1767265200_000,
    );
  });
});

describe('usage limits as Codex says them', () => {
  it('today: "Try again at 3:15 PM." (the machine’s local time), and a later day with its date', () => {
    expect(read("You've hit your usage limit. Try again at 3:15 PM.", 'Europe/Berlin')?.resetAt).toBe(at('2026-01-01T14:16:00Z'));
    expect(
      read(
        "You've hit your usage limit. Upgrade to Pro (https://openai.com/chatgpt/pricing), visit https://chatgpt.com/codex/settings/usage to purchase more credits or try again at Jan 5th, 2026 8:19 PM.",
      )?.resetAt,
    ).toBe(at('2026-01-05T20:20:00Z'));
  });

  it('0.27–0.40: "or try again in 2 days 3 hours 14 minutes."', () => {
    expect(
      read("You've hit your usage limit. Upgrade to Pro (https://openai.com/chatgpt/pricing) or try again in 2 days 3 hours 14 minutes.")?.resetAt,
    ).toBe(NOW + ((2 * 24 + 3) * 60 + 14) * 60_000);
  });

  it('without a time: "Try again later." and "wait for limits to reset"', () => {
    expect(read("You've hit your usage limit. Try again later.")).toEqual({ words: "You've hit your usage limit. Try again later." });
    expect(read("You've hit your usage limit. Upgrade to Pro, or wait for limits to reset (every 5h and every week.).")?.resetAt).toBeUndefined();
  });

  it('the backend’s own usage_limit_reached, with resets_at or resets_in_seconds', () => {
    expect(read('unexpected status 429: {"error":{"type":"usage_limit_reached","resets_at":1767268800}}')?.resetAt).toBe(1767268800_000);
    expect(read('{"error":{"type":"usage_limit_reached","resets_in_seconds":600}}')?.resetAt).toBe(NOW + 600_000);
  });

  it('the json reader: a turn.failed with the limit is one; a billing quota or an overloaded model is not', () => {
    const limited = codexJsonReader();
    limited.push(`${JSON.stringify({ type: 'turn.failed', error: { message: "You've hit your usage limit. Try again at 3:15 PM." } })}\n`);
    limited.end();
    expect(limited.usageLimit({ now: NOW, timeZone: () => 'UTC', stderr: '' })?.resetAt).toBe(at('2026-01-01T15:16:00Z'));
    const quota = codexJsonReader();
    quota.push(`${JSON.stringify({ type: 'error', message: 'Quota exceeded. Check your plan and billing details.' })}\n`);
    quota.end();
    expect(quota.usageLimit({ now: NOW, timeZone: () => 'UTC', stderr: '' })).toBeNull();
  });
});

describe('what is not a limit', () => {
  it('a reset in the past or months ahead is no reset time (the wait falls back to doubling)', () => {
    expect(read('Claude AI usage limit reached|1700000000')).toEqual({ words: 'Claude AI usage limit reached' });
    expect(read("You've hit your usage limit. Try again in 90 days.")?.resetAt).toBeUndefined();
  });

  it('a time of day names its minute, cut to it (Codex prints %-I:%M): the limit has lifted by that minute’s end, not before', () => {
    expect(read("You've hit your usage limit. Try again at 3:15 PM.")?.resetAt).toBe(at('2026-01-01T15:16:00Z'));
    expect(read("You've hit your limit · resets 12:50pm (UTC)")?.resetAt).toBe(at('2026-01-01T12:51:00Z'));
    // Said in the minute it names: still ahead, at the minute's end.
    expect(read("You've hit your limit · resets 10am (UTC)")?.resetAt).toBe(at('2026-01-01T10:01:00Z'));
  });

  it('a time of day said again just after it passed is the limit lifting now, not the same time tomorrow', () => {
    // The daemon woke its run at the reset; the CLI, a little behind, says the same time once more.
    expect(read("You've hit your usage limit. Try again at 9:59 AM.")).toEqual({ words: "You've hit your usage limit. Try again at 9:59 AM." });
    expect(read("You've hit your limit · resets 9:30am (UTC)")?.resetAt).toBeUndefined();
    expect(read('5-hour limit reached ∙ resets 9am', 'UTC')?.resetAt).toBeUndefined();
  });

  it('a plain command says no limit, whatever it prints', () => {
    const reader = plainReader();
    reader.push('Claude AI usage limit reached|1767265200');
    reader.end();
    expect(reader.usageLimit({ now: NOW, timeZone: () => 'UTC', stderr: 'usage limit reached' })).toBeNull();
  });
});
