/**
 * How a page waits before it opens its live socket again (issue 31): a tab the board dropped for
 * falling behind reconnected 28 times in a row, at once each time, since every open reset its wait.
 * The wait grows across failed opens and is reset only by a connection that stayed up a while.
 */
import { describe, expect, it } from 'vitest';
import { BACKOFF, failuresAfter, reconnectDelay } from '../../web/static/backoff.js';

const middle = () => 0.5;

describe('the live socket reconnects with a growing wait', () => {
  it('each failed open waits longer, up to a cap', () => {
    const delays = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((failures) => reconnectDelay(failures, middle));
    for (let i = 1; i < delays.length; i++) expect(delays[i]).toBeGreaterThanOrEqual(delays[i - 1]!);
    expect(delays[0]).toBe(BACKOFF.firstMs);
    expect(delays[1]).toBe(2 * BACKOFF.firstMs);
    expect(delays.at(-1)).toBe(BACKOFF.maxMs);
  });

  it('the wait is spread by up to a quarter either way, so tabs do not all return at once', () => {
    for (const failures of [0, 3, 20]) {
      const base = reconnectDelay(failures, middle);
      expect(reconnectDelay(failures, () => 0)).toBe(base * 0.75);
      expect(reconnectDelay(failures, () => 0.999_999)).toBeCloseTo(base * 1.25, 0);
    }
  });

  it('a socket closed soon after it opened counts as one more failure: opening is not enough', () => {
    let failures = 0;
    for (let i = 0; i < 5; i++) failures = failuresAfter(failures, { openedForMs: 400 });
    expect(failures).toBe(5);
    expect(reconnectDelay(failures, middle)).toBe(32 * BACKOFF.firstMs);
    // A socket that never opened is a failure too.
    expect(failuresAfter(failures, { openedForMs: null })).toBe(6);
  });

  it('only a connection that stayed healthy for a while starts the wait over', () => {
    expect(failuresAfter(7, { openedForMs: BACKOFF.healthyMs - 1 })).toBe(8);
    expect(failuresAfter(7, { openedForMs: BACKOFF.healthyMs })).toBe(0);
  });
});
