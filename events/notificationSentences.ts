import { wordNotificationReason } from './notificationReasons.ts';
import { plural, type Sentences } from './words.ts';

/** What `runledger audit` says of each event of the notifications (see words.ts). */
export const notificationSentences: Sentences<'notification'> = {
  // Notifications: a session's inbox.
  'subscription.opened': (event) => {
    const { subscriptionId, lane, kinds } = event.data;
    return `subscription ${subscriptionId} hears ${kinds.join(', ')}${lane ? ` of lane ${lane}` : ''}`;
  },
  'subscription.closed': (event) => `subscription ${event.data.subscriptionId} closed: ${event.data.reason}`,
  'inbox.read': (event) => {
    const { record, liveness, heard } = event.data;
    return `a round found ${plural(heard.length, 'notice')} to file (recorded ${record}${liveness ? `, read ${liveness}` : ''})`;
  },
  'notices.handed': (event) =>
    `notices up to #${event.data.through} were handed to the agent${event.data.runId ? ` ahead of run ${event.data.runId}` : ''}`,
  'notice.filed': (event) => `notice #${event.data.n} filed for subscription ${event.data.subscriptionId}: ${event.data.text}`,
  // Its decisions not to file: their reasons worded from their codes (or as an older version recorded them).
  'inbox.waiting': (event) => wordNotificationReason(event.data.reason),
  'inbox.withheld': (event) => wordNotificationReason(event.data.reason),
};
