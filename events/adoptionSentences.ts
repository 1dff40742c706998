import { wordAdoptionReason } from './adoptionReasons.ts';
import { clock, type Sentences } from './words.ts';

/** What `runledger audit` says of each event of the adoption (see words.ts). */
export const adoptionSentences: Sentences<'adoption'> = {
  // Adoption: a lane bound to a live session.
  'adoption.requested': (event) => `lane ${event.data.lane} asked to adopt session ${event.data.sessionId}`,
  'adoption.released': (event) => `lane ${event.data.lane}'s adoption request was released: ${event.data.reason}`,
  'adoption.listing.read': (event) => {
    const { sessionId, listedOn, error, lock } = event.data;
    return `${lock} read the listing of session ${sessionId}: ${listedOn ? `on ${listedOn}` : error ? `unreadable (${error})` : 'not listed'}`;
  },
  'adoption.bind.ended': (event) =>
    `the bind of session ${event.data.sessionId} by ${event.data.lock} ${event.data.ok ? 'was made' : `failed: ${event.data.error ?? 'no reason given'}`}`,
  // Its decisions: their reasons worded from their codes (or as an older version recorded them).
  'adoption.claimed': (event) => `${wordAdoptionReason(event.data.reason)} (until ${clock(event.data.expires)})`,
  'adoption.waiting': (event) => `${wordAdoptionReason(event.data.reason)} (until ${clock(event.data.until)})`,
  'adoption.adopted': (event) => `adopted: ${wordAdoptionReason(event.data.reason)}`,
  'adoption.failed': (event) => `the adoption of session ${event.data.sessionId} failed: ${wordAdoptionReason(event.data.reason)}`,
};
