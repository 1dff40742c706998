/**
 * The longest budget a run may ask for: 30 days (docs/rules.md#computer-behaviour, Bounds); 0 = no local limit. Apart
 * from the schemas (zod) so that `runledger --help` can say it without loading them.
 */
export const MAX_TIMEOUT_S = 2_592_000;
