import { describe, expect, it } from 'vitest';
import { budgetMsOf, budgetWords, DEFAULT_TIMEOUT_S, deadlineOf, remainingMs, roundedDuration } from '../../../actors/run/budget.ts';

describe('the budget told to the agent, in a rounded unit', () => {
  it.each([
    [2 * 3_600_000, 'about 2 hours'],
    [7_200_000 + 10 * 60_000, 'about 2 hours'],
    [90 * 60_000, 'about 1.5 hours'],
    [150 * 60_000, 'about 2.5 hours'],
    [89 * 60_000, 'about 89 minutes'],
    [45 * 60_000, 'about 45 minutes'],
    [60_000, 'about 1 minute'],
    [30_000, 'about 30 seconds'],
    [1_000, 'about 1 second'],
    [200, 'about 1 second'],
  ])('%i ms reads %s', (ms, words) => {
    expect(roundedDuration(ms)).toBe(words);
  });

  it('given a budget, then the prompt sentence names it and says what happens past it', () => {
    const sentence = budgetWords(2 * 3_600_000);
    expect(sentence).toContain('You have about 2 hours for this turn');
    expect(sentence).toMatch(/stopped/);
    expect(budgetWords(45 * 60_000)).toContain('about 45 minutes');
    expect(budgetWords(30_000)).toContain('about 30 seconds');
  });

  it('given no limit (0 or null), then the sentence says so and still asks the agent to keep moving', () => {
    for (const none of [0, null]) {
      const sentence = budgetWords(none);
      expect(sentence).toMatch(/no time limit/);
      expect(sentence).toMatch(/keep making progress/);
      expect(sentence).not.toMatch(/about \d/);
    }
  });
});

describe('one deadline for the whole run', () => {
  it('given no timeout, then the default of 2 hours applies', () => {
    expect(DEFAULT_TIMEOUT_S).toBe(7_200);
    expect(deadlineOf(1_000)).toBe(1_000 + 7_200_000);
    expect(deadlineOf(1_000, null)).toBe(1_000 + 7_200_000);
    expect(budgetMsOf(undefined)).toBe(7_200_000);
  });

  it('given timeout_s 0, then there is no deadline', () => {
    expect(deadlineOf(1_000, 0)).toBeNull();
    expect(budgetMsOf(0)).toBeNull();
    expect(remainingMs(null, 5_000)).toBeNull();
  });

  it('given timeout_s 90, then the deadline is 90 s after the start, and what remains never goes below 0', () => {
    const deadline = deadlineOf(10_000, 90);
    expect(deadline).toBe(100_000);
    expect(remainingMs(deadline, 40_000)).toBe(60_000);
    expect(remainingMs(deadline, 200_000)).toBe(0);
  });

  it('given a negative or non-finite timeout, then it is refused with the value named', () => {
    expect(() => deadlineOf(0, -1)).toThrow(/-1/);
    expect(() => deadlineOf(0, Number.NaN)).toThrow(RangeError);
  });
});
