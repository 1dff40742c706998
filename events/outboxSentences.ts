import { plural, type Sentences } from './words.ts';

/** What `runledger audit` says of each event of the outbox (see words.ts). */
export const outboxSentences: Sentences<'outbox'> = {
  // The outbox.
  'outbox.taken': (event) =>
    `the outbox took ${plural(event.data.effects.length, 'effect')} (through seq ${event.data.through}${event.data.epoch === undefined ? '' : `, under the chores' lease epoch ${event.data.epoch}`})`,
  'outbox.performed': (event) =>
    `effect seq ${event.data.effect} ${event.data.ok ? 'performed' : 'failed'}${event.data.detail ? `: ${event.data.detail}` : ''}`,
  'outbox.interrupted': (event) => `effect seq ${event.data.effect} was cut short and will not run again: ${event.data.detail}`,
};
