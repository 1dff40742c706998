import type { Sentences } from './words.ts';

/** What `runledger audit` says of each event of the log retention (see words.ts). */
export const logSentences: Sentences<'log'> = {
  'log.archived': (event) =>
    `events ${event.data.from}..${event.data.to} left the live log for archive/${event.data.file} (older than ${event.data.retainDays} days)`,
  'log.archive.deleted': (event) =>
    `archive/${event.data.file} (events ${event.data.from}..${event.data.to}) deleted, older than ${event.data.afterDays} days`,
};
