/**
 * Lets a world's event loop run until nothing is left to do: no setImmediate pending (nact's mailboxes,
 * the store's group commit) and no microtask. The simulated world does no real I/O (SQLite is
 * synchronous, the network and the processes are the simulator's), so once the immediates stop it
 * is quiescent until the scheduler's next task. Immediates are counted by wrapping the globals,
 * which nact and the store call by name. The one exception, a world on a real PostgreSQL log
 * (sim/pgLog.ts), has each call of its stores `tracked`: a step ends once none is left in flight.
 */
const realSetImmediate = globalThis.setImmediate;
const realClearImmediate = globalThis.clearImmediate;
let outstanding = 0;
let scheduled = 0;
const live = new WeakSet<object>();
let installed = false;
/** Calls on real I/O (a PostgreSQL store's) still in flight. */
let inFlight = 0;

/** Real I/O the world waits for: a step ends only once it has settled, whatever it resolved to. */
export function tracked<T>(promise: Promise<T>): Promise<T> {
  inFlight++;
  const done = () => void inFlight--;
  promise.then(done, done);
  return promise;
}

/** How long (real ms) a step may wait for its real I/O before the world is called stuck. */
const IO_WAIT_MS = 60_000;

function install(): void {
  if (installed) return;
  installed = true;
  const counted = ((fn: (...args: unknown[]) => void, ...args: unknown[]) => {
    outstanding++;
    scheduled++;
    const handle = realSetImmediate(() => {
      if (live.delete(handle)) outstanding--;
      fn(...args);
    });
    live.add(handle);
    return handle;
  }) as typeof setImmediate;
  globalThis.setImmediate = Object.assign(counted, { __promisify__: realSetImmediate.__promisify__ });
  globalThis.clearImmediate = ((handle: NodeJS.Immediate | undefined) => {
    if (handle && live.delete(handle)) outstanding--;
    realClearImmediate(handle);
  }) as typeof clearImmediate;
}

export class UnsettledError extends Error {}

/** Resolves once two full turns of the event loop passed with nothing scheduled; throws past `maxTurns`. */
export async function settle(maxTurns = 20_000): Promise<number> {
  install();
  let quiet = 0;
  // Read only once a step waits for real I/O (a world on PostgreSQL): a clock read at each of a world's thousands of steps is not free.
  let ioDeadline = Number.NaN;
  for (let turn = 0; turn < maxTurns; turn++) {
    if (inFlight > 0) {
      // Real I/O answers in the poll phase, which each turn of the loop passes. Not a turn of the world's own.
      if (Number.isNaN(ioDeadline)) ioDeadline = performance.now() + IO_WAIT_MS;
      else if (performance.now() > ioDeadline) throw new UnsettledError(`${inFlight} calls on real I/O unanswered after ${IO_WAIT_MS} ms`);
      quiet = 0;
      turn--;
      await new Promise<void>((resolve) => realSetImmediate(resolve));
      continue;
    }
    const before = scheduled;
    await new Promise<void>((resolve) => realSetImmediate(resolve));
    if (outstanding === 0 && scheduled === before) {
      if (++quiet >= 2) return turn;
    } else quiet = 0;
  }
  throw new UnsettledError(`the world did not settle within ${maxTurns} turns of the event loop`);
}

/** Called once before a world is built, so the very first immediates are counted. */
export function installSettle(): void {
  install();
}
