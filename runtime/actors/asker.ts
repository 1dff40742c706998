import type { Clock } from './clock.ts';

/**
 * A query's other end (runtime/actors/runtime.ts): what the actor's `reply` answers, once. Its timer
 * runs on the actor system's `Clock`, so a virtual clock times queries out as it moves; an answer
 * cancels the timer, and one that comes after the asker gave up is dropped.
 */
export class Asker {
  constructor(readonly answer: (value: unknown) => void) {}
}

/**
 * Hands `send` a new asker and resolves with its answer, or rejects with `timedOut()` once `timeoutMs`
 * passed on `clock` first. A `send` that throws rejects with its error, the timer cancelled; so does
 * the `fail` it is handed, when the message can no longer be answered (its actor stopped first).
 */
export function ask(
  clock: Clock,
  timeoutMs: number,
  timedOut: () => Error,
  send: (asker: Asker, fail: (error: Error) => void) => void,
): Promise<unknown> {
  return new Promise<unknown>((resolve, reject) => {
    let open = true;
    const cancel = clock.after(timeoutMs, () => {
      open = false;
      reject(timedOut());
    });
    const close = () => {
      const was = open;
      open = false;
      cancel();
      return was;
    };
    try {
      send(new Asker((value) => close() && resolve(value)), (error) => close() && reject(error));
    } catch (error) {
      if (close()) reject(error);
    }
  });
}
