import { clock, plural, type Sentences } from './words.ts';

/** What `runledger audit` says of each event of the board's edge, where requests are refused (see words.ts). */
export const edgeSentences: Sentences<'edge'> = {
  'board.request.rejected': (event) =>
    `${event.data.method} ${event.data.path} was rejected ${event.data.status} ${event.data.code}: ${event.data.reason}`,
  'board.requests.refused': (event) => {
    const reasons = Object.entries(event.data.reasons)
      .map(([code, n]) => `${code} ${n}`)
      .join(', ');
    return `${plural(event.data.count, 'request')} without a valid token refused from ${clock(event.data.first_at)} to ${clock(event.data.last_at)} (${reasons})`;
  },
};
