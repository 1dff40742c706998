import { BOARD_INPUTS } from '../../actors/board/decideBoard.ts';
import { QUEUE_INPUTS } from '../../actors/lane/decideQueue.ts';
import { RUN_INPUTS } from '../../actors/run/decideRun.ts';
import { SESSION_INPUTS } from '../../actors/session/decideSession.ts';
import type { DomainEvent, EventOf, EventType } from '../../events/catalog.ts';

/** Which part of the audit summary an event counts in (`none`: it counts in none). */
export type Role = 'board' | 'queue' | 'sessions' | 'none';

/** What the summary counts, by the part it counts it in. */
export const COUNTED = {
  board: ['board.run.queued', 'board.run.deduplicated', 'board.run.finished', 'board.run.resolved', 'board.run.cancelled', 'board.request.refused'],
  queue: [
    'run.queued',
    'run.claim.started',
    'run.parked',
    'run.unparked',
    'run.claim.retrying',
    'run.requeued',
    'run.ended',
    'run.skipped',
    'run.withdrawn',
  ],
  sessions: [
    'session.close.intended',
    'session.closed',
    'session.close.deferred',
    'session.close.incident',
    'adoption.requested',
    'adoption.released',
    'adoption.adopted',
    'adoption.failed',
    'hook.exited',
    'hook.interrupted',
    'notice.filed',
    'notices.handed',
    'inbox.waiting',
    'inbox.withheld',
  ],
} as const satisfies Record<Exclude<Role, 'none'>, readonly EventType[]>;

/** Inputs (each decider's own list), and decisions whose outcome shows in one of the above. */
const UNCOUNTED = [
  ...BOARD_INPUTS,
  ...QUEUE_INPUTS,
  ...RUN_INPUTS,
  ...SESSION_INPUTS,
  'outbox.taken',
  'outbox.performed',
  'outbox.interrupted',
  'frame.acknowledged',
  'run.claimed',
  'run.workspace.requested',
  'run.branch.push.requested',
  'run.execution.requested',
  'run.cancel.decided',
  'run.kill.requested',
  'run.resolved.elsewhere',
  'run.completion.requested',
  'run.completion.retrying',
  'run.completion.paused',
  'run.settled',
  // A usage limit's wait is told by the run's timeline and `status`; the summary counts runs by how they end.
  'run.limit.reached',
  'run.start.held',
  'run.limit.waiting',
  'run.limit.resumed',
  'lane.session.remembered',
  'lane.session.forgotten',
  'board.run.offered',
  'board.run.claimed',
  'board.run.running',
  'board.run.cancel.requested',
  'board.run.replied',
  'board.computer.registered',
  'board.computer.online',
  'board.computer.offline',
  'board.request.repeated',
  'board.request.rejected',
  'board.requests.refused',
  'board.computer.draining',
  'session.close.claimed',
  'session.kill.requested',
  'hook.tick.due',
  'subscription.opened',
  'subscription.closed',
  'inbox.read',
  'adoption.listing.read',
  'adoption.bind.ended',
  'adoption.claimed',
  'adoption.waiting',
  'token.added',
  'log.archived',
  'log.archive.deleted',
] as const satisfies readonly EventType[];

export type CountedIn<R extends keyof typeof COUNTED> = (typeof COUNTED)[R][number];
type Unplaced = Exclude<EventType, CountedIn<keyof typeof COUNTED> | (typeof UNCOUNTED)[number]>;

/**
 * Which events the summary reads. Exhaustive: an event type added to the catalog does not compile until
 * it is placed in one of the lists above (the error names it), so nothing a person would ask the
 * summary about can land without being counted.
 */
export const EVERY_TYPE_PLACED: [Unplaced] extends [never] ? true : { unplaced: Unplaced } = true;

/** Looked up once a type: the fold asks this of every event in the log. */
export const ROLES: Readonly<Record<string, Role>> = Object.fromEntries([
  ...UNCOUNTED.map((type) => [type, 'none'] as const),
  ...COUNTED.board.map((type) => [type, 'board'] as const),
  ...COUNTED.queue.map((type) => [type, 'queue'] as const),
  ...COUNTED.sessions.map((type) => [type, 'sessions'] as const),
]);

/** Whether the summary counts the event in `role`: it is then of a type counted there. */
export function countsIn<R extends keyof typeof COUNTED>(event: DomainEvent, role: R): event is EventOf<CountedIn<R>> {
  return ROLES[event.type] === role;
}
