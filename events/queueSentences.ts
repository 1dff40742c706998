import { wordQueueReason } from './queueReasons.ts';
import { clock, plural, type Sentences, startWords } from './words.ts';

/** What `runledger audit` says of each event of the computer's queue (see words.ts). */
export const queueSentences: Sentences<'queue'> = {
  // The computer's queue: inputs.
  'computer.configured': (event) => {
    const logins = Object.entries(event.data.loginCapacity).map(([login, n]) => `${login} ${n}`);
    return `configured: ${plural(event.data.slots, 'slot')}${logins.length ? `, runs at once per login: ${logins.join(', ')}` : ''}`;
  },
  'computer.started': (event) =>
    `the daemon started (incarnation ${event.data.incarnation}, ${event.data.host} pid ${event.data.pid}): what its last life left unfinished ends`,
  'scheduler.held': (event) => `${event.data.held ? 'the scheduler is held' : 'the scheduler is released'}: ${event.data.reason}`,
  'drain.started': (event) => `draining, nothing new starts: ${event.data.reason}`,
  'frame.received': (event) => {
    const { kind, frameId, lane, computerId } = event.data;
    const where = [`frame ${frameId}`, lane ? `lane ${lane}` : '', computerId ? `for computer ${computerId}` : ''].filter(Boolean).join(', ');
    if (kind === 'run.requested') return `the board pushed the run (${where})`;
    if (kind === 'run.cancelled') return `the board announced its cancel (${where})`;
    return `the board sent a frame of kind "${kind}" (${where})`;
  },
  'frame.refused': (event) =>
    `a frame could not be read (${event.data.frameId === null ? 'no id' : `frame ${event.data.frameId}`}): ${event.data.reason}`,
  'claim.answered': (event) => {
    const { status, code } = event.data;
    if (status === 0) return 'the claim got no answer: network error';
    return `the board answered the claim: ${status}${code ? ` ${code}` : ''}`;
  },
  'timer.fired': () => 'its wait is over: the timer fired',
  'run.start.failed': (event) => `the run could not start: ${event.data.reason}`,
  'run.limit.reported': (event) =>
    `its agent stopped at the login's usage limit${event.data.resetAt === undefined ? '' : `, reset at ${clock(event.data.resetAt)}`}: “${event.data.words}”`,
  'login.limit.due': (event) => `login ${event.data.login}'s usage limit is due to lift`,
  'run.execution.ended': (event) =>
    `the agent's process ended ${event.data.ok ? 'well' : `in failure${event.data.reason ? `: ${event.data.reason}` : ''}`}`,
  // The computer's queue: decisions, their reasons worded from their codes (or as an older version recorded them).
  'frame.acknowledged': (event) => `frame acknowledged ${event.data.status}: ${wordQueueReason(event.data.reason)}`,
  'run.queued': (event) =>
    `queued in lane ${event.data.lane}${event.data.agentId ? ` for agent ${event.data.agentId}` : ''} (arrival ${event.data.arrival})`,
  'run.claim.started': (event) => `claiming it from the board (attempt ${event.data.attempt})`,
  'run.claimed': (event) => {
    const { skills, start } = event.data;
    const held = event.data.heldUntil === undefined ? '' : `, held: its login is at its usage limit until ${clock(event.data.heldUntil)}`;
    return `claimed${skills.length ? `, with skills ${skills.join(', ')}` : ''}${start ? `: handed to its run (${startWords(start.budgetS, start.laneSession)})` : ''}${held}`;
  },
  'run.parked': (event) => `${wordQueueReason(event.data.reason)} (until ${clock(event.data.notBefore)}, wait ${event.data.busyWaits})`,
  'run.claim.retrying': (event) =>
    `${wordQueueReason(event.data.reason)} (attempt ${event.data.claimAttempts + 1} at ${clock(event.data.notBefore)})`,
  'run.limit.waiting': (event) =>
    `${wordQueueReason(event.data.reason)} (until ${clock(event.data.notBefore)}, limit ${event.data.strikes} in a row): “${event.data.words}”`,
  'run.limit.resumed': (event) => wordQueueReason(event.data.reason),
  'run.unparked': (event) => wordQueueReason(event.data.reason),
  'run.requeued': (event) => wordQueueReason(event.data.reason),
  'run.skipped': (event) => wordQueueReason(event.data.reason),
  'run.withdrawn': (event) => wordQueueReason(event.data.reason),
  'run.ended': (event) => `ended: ${wordQueueReason(event.data.reason)}`,
};
