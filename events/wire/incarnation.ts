/**
 * What the board and the computer agree on about a daemon's life (docs/rules.md#wire-and-cli), defined once for
 * both sides of the wire.
 */

/** The header that names the daemon's life on claims and on the push stream's upgrade (as Node reads it: lower case). */
export const INCARNATION_HEADER = 'runledger-incarnation';

/** WebSocket close code and reason for a second daemon joining as a computer already connected. */
export const CONNECTED_ELSEWHERE = { code: 4409, reason: 'computer_connected_elsewhere' } as const;
