/**
 * A run's time budget (docs/rules.md#computer-behaviour, "Execution"): one deadline for the whole run, and the
 * sentence of the prompt that tells the agent about it.
 */

/**
 * Two hours. The budget is a backstop against a process that is truly stuck, not a shape imposed on
 * the work: a coding turn can take a long time, and the board's lease (kept alive by heartbeats) is
 * the better judge of a run that went silent.
 */
export const DEFAULT_TIMEOUT_S = 7_200;

/** The budget in ms for a run's `timeout_s`; absent means the default, `0` means no limit (null). */
export function budgetMsOf(timeoutS?: number | null): number | null {
  const seconds = timeoutS ?? DEFAULT_TIMEOUT_S;
  if (!Number.isFinite(seconds) || seconds < 0) throw new RangeError(`a run's timeout_s must be 0 or more seconds, got ${seconds}`);
  return seconds === 0 ? null : seconds * 1_000;
}

/**
 * When the run must be over, or null when it has no local limit. Taken once, when the run starts:
 * a retry after a refused resume shares it, so one run never gets twice the time it was allowed.
 */
export function deadlineOf(startAt: number, timeoutS?: number | null): number | null {
  const budget = budgetMsOf(timeoutS);
  return budget === null ? null : startAt + budget;
}

/** What is left of the budget at `now` (never below 0); null without a deadline. */
export function remainingMs(deadlineAt: number | null, now: number): number | null {
  return deadlineAt === null ? null : Math.max(0, deadlineAt - now);
}

/**
 * A duration in the unit a reader thinks in: "about 2 hours", "about 45 minutes", "about 30 seconds".
 * Rounded on purpose: the agent is never told the exact remainder, so an exact-looking figure would
 * promise a precision nobody keeps.
 */
export function roundedDuration(ms: number): string {
  const minutes = ms / 60_000;
  if (minutes >= 90) {
    // To the half hour: "about 1.5 hours", "about 2 hours".
    const hours = Math.round((minutes / 60) * 2) / 2;
    return `about ${hours} hours`;
  }
  if (minutes >= 1) {
    const whole = Math.round(minutes);
    return `about ${whole} ${whole === 1 ? 'minute' : 'minutes'}`;
  }
  const seconds = Math.max(1, Math.round(ms / 1_000));
  return `about ${seconds} ${seconds === 1 ? 'second' : 'seconds'}`;
}

/**
 * The prompt's sentence about time. Both forms matter: an agent told only that "there is a limit"
 * treats two hours like five minutes, and an agent told nothing on an unlimited run may explore for
 * ever, while from the outside a silent run cannot be told from a crashed one.
 */
export function budgetWords(budgetMs: number | null): string {
  if (budgetMs === null || budgetMs <= 0) {
    return (
      'There is no time limit on this turn: take the time the work needs, but keep making progress ' +
      'toward an answer, because your reply is delivered only when the turn ends and a turn that stays ' +
      'quiet for long looks stalled to the person waiting.'
    );
  }
  return (
    `You have ${roundedDuration(budgetMs)} for this turn. A turn that runs past it is stopped and its ` +
    'reply is lost, so plan the work to fit and save time at the end to write your answer.'
  );
}
