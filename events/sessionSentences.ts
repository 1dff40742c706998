import { wordSessionReason } from './sessionReasons.ts';
import { clock, type Sentences } from './words.ts';

/** What `runledger audit` says of each event of the session close (see words.ts). */
export const sessionSentences: Sentences<'session'> = {
  // A session's close on its computer.
  'session.run.ended': (event) =>
    `run ${event.data.runId} ended in it${event.data.bound ? '' : ' (a launch no session was ever read for)'}${event.data.pid === null ? '' : `, its process group ${event.data.pid} perhaps still alive`}`,
  'session.close.due': (event) => {
    const { lock, holder } = event.data;
    const found =
      holder === null ? 'unclaimed' : `claimed by ${holder.lock}${holder.alive === null ? '' : holder.alive ? ', alive' : ', whose process is gone'}`;
    return `a round of ${lock} reached its close (${found})`;
  },
  'session.read': (event) => {
    const { activity, failure } = event.data;
    if (activity === null) return `read just before the kill: it could not be read (${failure ?? 'no reason given'})`;
    const mark = activity.mark === null ? '' : `, record last written ${clock(activity.mark)}`;
    return `read just before the kill: ${activity.presence}, turn ${activity.turn}${mark}${activity.seen ? ` — ${activity.seen}` : ''}`;
  },
  'session.kill.answered': (event) => `its kill (attempt ${event.data.attempt}) ${event.data.ok ? 'stopped it' : 'failed'}: ${event.data.detail}`,
  'session.close.intended': (event) => `close intended: ${wordSessionReason(event.data.reason)}`,
  'session.close.claimed': (event) =>
    `close claimed by ${event.data.lock} until ${clock(event.data.expires)}: ${wordSessionReason(event.data.reason)}`,
  'session.close.deferred': (event) => `close deferred (attempt ${event.data.attempt}): ${wordSessionReason(event.data.reason)}`,
  'session.kill.requested': (event) =>
    `close goes ahead (attempt ${event.data.attempt}), stopping ${event.data.target}: ${wordSessionReason(event.data.reason)}`,
  'session.closed': (event) => `closed (attempt ${event.data.attempt}): ${wordSessionReason(event.data.reason)}`,
  'session.close.incident': (event) => `close failed for good (attempt ${event.data.attempt}), an incident: ${wordSessionReason(event.data.reason)}`,
};
