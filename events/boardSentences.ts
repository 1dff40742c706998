import { wordBoardReason } from './boardReasons.ts';
import { clock, plural, type Sentences, sayOnce, withUsage } from './words.ts';

/** What `runledger audit` says of each event of the board (see words.ts). */
export const boardSentences: Sentences<'board'> = {
  // The board: inputs.
  'board.run.submitted': (event) => {
    const { lane, agentId, timeoutS } = event.data;
    const budget = timeoutS === null ? '' : timeoutS === 0 ? ', no time limit' : `, budget ${timeoutS} s`;
    return `submitted to lane ${lane}${agentId ? ` for agent ${agentId}` : ''}${budget}`;
  },
  'board.computer.added': (event) => `computer ${event.data.computerId} was added`,
  'board.computer.connected': (event) => `computer ${event.data.computerId} connected`,
  'board.computer.disconnected': (event) => `computer ${event.data.computerId} disconnected`,
  'board.claim.requested': (event) =>
    `computer ${event.data.computerId} asked to claim it${event.data.incarnation ? ` (incarnation ${event.data.incarnation})` : ''}`,
  'board.offer.declined': (event) => `computer ${event.data.computerId} declined its frame: ${event.data.reason}`,
  'board.offer.stale': (event) => `it stayed unclaimed with its lane free since ${clock(event.data.unclaimedSince)}`,
  'board.heartbeat.lapsed': (event) => `its heartbeats stopped (the last at ${clock(event.data.lastHeartbeatAt)})`,
  'board.cancel.requested': () => 'a cancel was asked for',
  'board.run.started': (event) => `computer ${event.data.computerId} reported it started`,
  'board.reply.received': (event) => `computer ${event.data.computerId} sent its reply (${plural(event.data.text.length, 'character')})`,
  'board.completion.received': (event) => {
    const { computerId, ok, error } = event.data;
    return `computer ${computerId} reported it ${ok ? 'succeeded' : `failed${error ? `: ${error}` : ''}`}`;
  },
  // The board: decisions, their reasons worded here (a code), or as an older version recorded them.
  'board.run.queued': (event) => {
    const { lane, submittedOrder, waits } = event.data;
    return `queued on the board in lane ${lane} (submission ${submittedOrder})${waits ? `: ${wordBoardReason(waits)}` : ''}`;
  },
  'board.run.deduplicated': (event) => wordBoardReason(event.data.reason),
  'board.run.cancelled': (event) => wordBoardReason(event.data.reason),
  'board.run.resolved': (event) => wordBoardReason(event.data.reason),
  'board.computer.registered': (event) => wordBoardReason(event.data.reason),
  'board.computer.online': (event) => wordBoardReason(event.data.reason),
  'board.computer.offline': (event) => wordBoardReason(event.data.reason),
  'board.computer.draining': (event) => wordBoardReason(event.data.reason),
  'board.run.offered': (event) => `${wordBoardReason(event.data.reason)} (offered to ${event.data.computers.join(', ')})`,
  'board.run.claimed': (event) => sayOnce(`claimed by ${event.data.computerId}`, wordBoardReason(event.data.reason)),
  'board.run.running': (event) => `running on ${event.data.computerId}: ${wordBoardReason(event.data.reason)}`,
  'board.run.cancel.requested': (event) => `cancel passed on to ${event.data.computerId}: ${wordBoardReason(event.data.reason)}`,
  'board.run.replied': (event) => `the reply was recorded (${plural(event.data.text.length, 'character')})`,
  'board.run.finished': (event) => {
    // The board's reason already says the outcome and the error's first line ("completed: failed (X)").
    const { state, error } = event.data;
    const reason = wordBoardReason(event.data.reason);
    const told = reason.startsWith(`completed: ${state}`) ? reason : `finished, ${state}: ${reason}`;
    const said = !error || state === 'cancelled' || told.includes(error.split('\n', 1)[0]!.slice(0, 100));
    return withUsage(said ? told : `${told} (${error})`, event.data.usage);
  },
  'board.request.refused': (event) =>
    `the ${event.data.request} request was refused ${event.data.status} ${event.data.code}: ${wordBoardReason(event.data.reason)}`,
  'board.request.repeated': (event) =>
    `the ${event.data.request} request was answered again ${event.data.status}: ${wordBoardReason(event.data.reason)}`,
};
