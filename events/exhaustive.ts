import type { EventOf, EventType } from './catalog.ts';

/**
 * Ends a fold's switch: the events left for its `default` must be of the types `T` the fold says it
 * does not read, or the call does not compile. A fold names each type it reads in a `case` and puts
 * the others in `T` (by name, or a whole group it reads nothing of with `TypesOf`), so a new event
 * type makes the compiler list every fold that reads its group and has not said whether it reads it.
 * Does nothing at run time: the check is the argument's type.
 */
export function ignoreRest<T extends EventType>(_event: EventOf<T>): void {
  // A check for the compiler only: a type left unsaid does not compile. Nothing to do at run time.
}

/**
 * Ends a switch that names every type it can meet (a decider's over its inputs): `_input` is `never`
 * there, or the call does not compile. `fallback` is what a type the switch does not know gets at run
 * time, as before typing: the runtime hands a decider only what its `isInput` takes, but does not say so to the compiler.
 */
export function exhausted<R>(_input: never, fallback: R): R {
  return fallback;
}
