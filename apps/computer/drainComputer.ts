import type { Clock } from '../../runtime/actors/clock.ts';
import type { Computer } from './computer.ts';

/** What a drain left, for the daemon's last line: turns that finished in their drain time, and those stopped. */
export interface DrainReport {
  readonly computer: string;
  readonly finished: number;
  readonly stopped: number;
  /**
   * Runs whose end could not be recorded by the end of the drain time, the log being unwritable (a
   * lock another process held, a full disk): the next start finds them interrupted.
   */
  readonly unrecorded: number;
  /** Why the log could not be written then, when `unrecorded` > 0. */
  readonly why: string | null;
}

/**
 * Shutdown (docs/rules.md#computer-behaviour, "Completion"): nothing new is claimed or started, executing runs get
 * `drainMs` to finish, then their process groups are killed; resolves once every run is settled (but
 * those waiting out a usage limit: they stay claimed in the log, for the next start).
 * The push stream stays open meanwhile, so a frame that arrives is answered 503 `draining` (the
 * board offers the run again later) rather than left without an answer.
 * A log that cannot be written when the drain time is over (another process holds its lock) ends the
 * wait there: what is still unrecorded would wait for it without bound, and the signal asked for an
 * exit (docs/rules.md#the-log).
 */
export async function drainComputer(
  computer: Computer,
  clock: Clock,
  drainMs: number,
  log: (line: string) => void,
  reason = 'shutdown signal',
  /** How the drain waits between its looks: 100 ms of real time (a ref'd timer keeps the process up); sim/ gives its virtual clock's. */
  pause: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
): Promise<DrainReport> {
  const id = computer.queue.computer;
  const running = computer.runs.runsToDrain().length;
  log(
    `computer ${id} draining (${reason}): nothing new starts; ${running === 0 ? 'no turn is running' : `${running} running turn(s) get ${Math.round(drainMs / 1000)} s to finish`}`,
  );
  computer.runs.beginDrain();
  const deadline = clock.now() + drainMs;
  const overAndUnwritable = () => clock.now() >= deadline && computer.logUnwritable() !== null;
  const started = computer.queue.input({ stream: `${id}/computer:${id}`, type: 'drain.started', data: { reason }, at: clock.now() });
  let killed = false;
  let stopped = 0;
  let left = (await unlessGivenUp(started, overAndUnwritable, pause)) !== GAVE_UP;
  while (left) {
    const something = await unlessGivenUp(somethingLeft(computer), overAndUnwritable, pause);
    if (something === GAVE_UP || !something) break;
    if (clock.now() >= deadline) {
      if (!killed) {
        stopped = computer.runs.runsToDrain().length;
        log(`computer ${id}: drain time over: stopping ${stopped} run(s)`);
        killed = true;
      }
      // Every round, not once: a turn whose spawn was already decided when the drain began may begin
      // its process after the first kill, and would otherwise run to its end (a drain of 0 s included).
      computer.runs.killAll();
      if (overAndUnwritable()) left = false;
    }
    if (clock.now() >= deadline + 15 * 60_000) break;
    if (left) await pause(100);
  }
  const unwritable = computer.logUnwritable();
  const unrecorded = unwritable === null ? 0 : computer.runs.runsToDrain().length;
  if (unwritable !== null && unrecorded > 0) {
    computer.runs.killAll();
    log(
      `computer ${id}: the drain time is over and ${unwritable.message}: ${unrecorded} run(s) end unrecorded; ` +
        'the next start finds them interrupted and completes them as failed',
    );
  }
  await computer.push.stop();
  return {
    computer: id,
    finished: Math.max(0, running - stopped - unrecorded),
    stopped,
    unrecorded,
    why: unrecorded > 0 ? (unwritable?.publicReason ?? null) : null,
  };
}

const GAVE_UP = Symbol('gave up');

/** `work`'s answer, or GAVE_UP as soon as `givenUp()` says so (looked at every 100 ms): `work` goes on unheard. */
async function unlessGivenUp<T>(work: Promise<T>, givenUp: () => boolean, pause: (ms: number) => Promise<void>): Promise<T | typeof GAVE_UP> {
  let settled = false;
  const done = work.finally(() => {
    settled = true;
  });
  const watch = async (): Promise<typeof GAVE_UP | null> => {
    while (!settled) {
      if (givenUp()) return GAVE_UP;
      await pause(100);
    }
    return null;
  };
  const first = await Promise.race([done, watch()]);
  if (first !== GAVE_UP) return first === null ? done : first;
  done.catch(() => undefined);
  return GAVE_UP;
}

/**
 * Whether a run or a claim is still owed its end. A claim in flight is waited for too: if the board
 * grants it, the run is the daemon's to complete. The claims are counted first: the count is read in
 * the queue's actor once its appends in flight are committed, and a claim answered meanwhile has its
 * run handed over (live) by then. Runs looked at before that count could miss it, and end the drain
 * before its completion is sent.
 */
async function somethingLeft(computer: Computer): Promise<boolean> {
  const claims = await computer.queue.claimsInFlight();
  return claims > 0 || computer.runs.runsToDrain().length > 0;
}
