import { createRequire } from 'node:module';
import type { Clock } from '../runtime/actors/clock.ts';

/**
 * nact arms two real timers: a query's timeout and an actor's passivation (`shutdownAfter`). Left
 * real, they would fire at moments of real time, between any two steps of a world, and a world run
 * twice could differ. So, in the simulator only, both are armed on the clock of the life the actor
 * system belongs to: they fire in virtual time (a query stuck 30 virtual seconds times out, as in
 * production), and a life that crashed takes them with it. Systems not registered keep nact's timers.
 */
const require = createRequire(import.meta.url);
interface NactActor {
  system: { name: string };
  shutdownPeriod: number;
  timeout: unknown;
  stop(): void;
  dispatch(message: unknown, sender: unknown): void;
}
const { Actor } = require('nact/lib/actor.js') as { Actor: { prototype: NactActor & Record<string, unknown>; getSafeTimeout(ms: number): number } };
const { Deferral } = require('nact/lib/deferral.js') as { Deferral: new () => { promise: Promise<unknown>; reject(e: unknown): void } };
const { TemporaryReference } = require('nact/lib/references.js') as { TemporaryReference: new (system: string) => unknown };

const clocks = new Map<string, Clock>();
let patched = false;

export function armNactOn(systemName: string, clock: Clock): void {
  patch();
  clocks.set(systemName, clock);
}

export function forgetNactSystem(systemName: string): void {
  clocks.delete(systemName);
}

function patch(): void {
  if (patched) return;
  patched = true;
  const proto = Actor.prototype;
  const originalQuery = proto.query as (this: NactActor, message: unknown, timeout: number) => Promise<unknown>;
  const originalSetTimeout = proto.setTimeout as (this: NactActor) => void;
  const originalClearTimeout = proto.clearTimeout as (this: NactActor) => void;
  proto.query = function (
    this: NactActor & { system: { addTempReference(r: unknown, d: unknown): void; removeTempReference(r: unknown): void } },
    message: unknown,
    timeout: number,
  ) {
    const clock = clocks.get(this.system.name);
    if (!clock) return originalQuery.call(this, message, timeout);
    // nact 7.6.2's query, with its timeout on the life's clock.
    (this as unknown as { assertNotStopped(): void }).assertNotStopped();
    const deferred = new Deferral();
    const cancel = clock.after(Actor.getSafeTimeout(timeout), () => deferred.reject(new Error('Query Timeout')));
    const temp = new TemporaryReference(this.system.name);
    this.system.addTempReference(temp, deferred);
    deferred.promise.then(
      () => {
        cancel();
        this.system.removeTempReference(temp);
      },
      () => this.system.removeTempReference(temp),
    );
    const built = typeof message === 'function' ? (message as (r: unknown) => unknown)(temp) : message;
    this.dispatch(built, temp);
    return deferred.promise;
  };
  proto.setTimeout = function (this: NactActor) {
    const clock = clocks.get(this.system.name);
    if (!clock) return originalSetTimeout.call(this);
    this.timeout = { cancel: clock.after(this.shutdownPeriod, () => this.stop()) };
  };
  proto.clearTimeout = function (this: NactActor) {
    const t = this.timeout as { cancel?: () => void } | undefined;
    if (t && typeof t.cancel === 'function') {
      t.cancel();
      this.timeout = undefined;
      return;
    }
    originalClearTimeout.call(this);
  };
}
