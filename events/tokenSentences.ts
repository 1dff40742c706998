import type { Sentences } from './words.ts';

/** What `runledger audit` says of each event of the submit tokens (see words.ts). */
export const tokenSentences: Sentences<'token'> = {
  'token.added': (event) => `submit token ${event.data.name} added (its hash only is kept)`,
  'token.revoked': (event) => `submit token ${event.data.name} revoked: boards refuse it from now on`,
};
