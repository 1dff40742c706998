import type { EventGroup, EventOf, EventType, TypesOf } from './catalog.ts';
import type { Usage } from './usage.ts';
import { usageWords } from './usageWords.ts';

/**
 * The audit's sentence of each type of the group `G`: one line a person can read, what `runledger
 * audit` prints beside the event. Decisions say why (their `reason`, plus the numbers that make it
 * concrete); inputs say what the world told us. Each group keeps its sentences in a file beside its
 * definitions (`events/<group>Sentences.ts`), and the compiler asks for the sentence of a new type.
 */
export type Sentences<G extends EventGroup> = { readonly [T in TypesOf<G>]: (event: EventOf<T & EventType>) => string };

/** `HH:MM:SS` in UTC: the log's times are UTC, and so is every time the audit prints. */
export function clock(at: number): string {
  return new Date(at).toISOString().slice(11, 19);
}

export function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/**
 * `head: reason`, unless the recorded reason says the head already (the board's claim reasons are
 * "claimed by c1"): each thing said once, from old logs and new alike.
 */
export function sayOnce(head: string, reason: string): string {
  return reason === head || reason.startsWith(`${head} `) || reason.startsWith(`${head}:`) ? reason : `${head}: ${reason}`;
}

/** A run's start as its hand-over (or its queue's claim) recorded it: its budget, and the lane's session it resumes. */
export function startWords(budgetS: number, laneSession: string | null): string {
  return `${budgetS === 0 ? 'no time limit' : `budget ${budgetS} s`}${laneSession ? `, its lane's session ${laneSession}` : ''}`;
}

/** What the turn cost, after what happened, when its agent said. */
export function withUsage(text: string, usage: Usage | undefined): string {
  const words = usage ? usageWords(usage) : '';
  return words ? `${text}; usage: ${words}` : text;
}
