import { type EventType, eventDefinitions } from '../../events/catalog.ts';

/** Which part of the audit summary an event counts in (`none`: it counts in none). */
export type Role = 'board' | 'queue' | 'sessions' | 'none';

/**
 * Which events the summary reads. Exhaustive: an event type added to the catalog does not compile until
 * it is placed here, so nothing a person would ask the summary about can land without being counted.
 */
function roleOf(type: EventType): Role {
  switch (type) {
    case 'board.run.queued':
    case 'board.run.deduplicated':
    case 'board.run.finished':
    case 'board.run.resolved':
    case 'board.run.cancelled':
    case 'board.request.refused':
      return 'board';
    case 'run.queued':
    case 'run.claim.started':
    case 'run.parked':
    case 'run.unparked':
    case 'run.claim.retrying':
    case 'run.requeued':
    case 'run.ended':
    case 'run.skipped':
    case 'run.withdrawn':
      return 'queue';
    case 'session.close.intended':
    case 'session.closed':
    case 'session.close.deferred':
    case 'session.close.incident':
    case 'adoption.requested':
    case 'adoption.released':
    case 'adoption.adopted':
    case 'adoption.failed':
    case 'hook.exited':
    case 'hook.interrupted':
    case 'notice.filed':
    case 'notices.handed':
    case 'inbox.waiting':
    case 'inbox.withheld':
      return 'sessions';
    // Inputs, and decisions whose outcome shows in one of the above.
    case 'outbox.taken':
    case 'outbox.performed':
    case 'outbox.interrupted':
    case 'computer.started':
    case 'computer.configured':
    case 'scheduler.held':
    case 'drain.started':
    case 'frame.received':
    case 'frame.refused':
    case 'claim.answered':
    case 'timer.fired':
    case 'run.start.failed':
    case 'run.execution.ended':
    case 'frame.acknowledged':
    case 'run.claimed':
    case 'run.handed.over':
    case 'run.process.began':
    case 'run.session.announced':
    case 'run.process.exited':
    case 'run.heartbeat.answered':
    case 'run.cancel.pushed':
    case 'run.completion.answered':
    case 'run.reply.refused':
    case 'run.completion.due':
    case 'run.found.interrupted':
    case 'run.shutdown.before.start':
    case 'run.claim.refused':
    case 'run.execution.requested':
    case 'run.cancel.decided':
    case 'run.kill.requested':
    case 'run.resolved.elsewhere':
    case 'run.completion.requested':
    case 'run.completion.retrying':
    case 'run.completion.paused':
    case 'run.settled':
    case 'lane.session.remembered':
    case 'lane.session.forgotten':
    case 'board.run.submitted':
    case 'board.computer.added':
    case 'board.computer.connected':
    case 'board.computer.disconnected':
    case 'board.claim.requested':
    case 'board.heartbeat.lapsed':
    case 'board.cancel.requested':
    case 'board.run.started':
    case 'board.reply.received':
    case 'board.completion.received':
    case 'board.run.offered':
    case 'board.run.claimed':
    case 'board.run.running':
    case 'board.run.cancel.requested':
    case 'board.run.replied':
    case 'board.computer.registered':
    case 'board.computer.online':
    case 'board.computer.offline':
    case 'board.request.repeated':
    case 'board.request.rejected':
    case 'board.requests.refused':
    case 'board.offer.declined':
    case 'board.computer.draining':
    case 'session.run.ended':
    case 'session.close.due':
    case 'session.read':
    case 'session.kill.answered':
    case 'session.close.claimed':
    case 'session.kill.requested':
    case 'hook.tick.due':
    case 'subscription.opened':
    case 'subscription.closed':
    case 'inbox.read':
    case 'adoption.listing.read':
    case 'adoption.bind.ended':
    case 'adoption.claimed':
    case 'adoption.waiting':
      return 'none';
    default: {
      const unplaced: never = type;
      throw new Error(`the audit summary does not know event type ${unplaced as string}`);
    }
  }
}

/** Looked up once a type: the fold asks this of every event in the log. */
export const ROLES: Readonly<Record<string, Role>> = Object.fromEntries(Object.keys(eventDefinitions).map((t) => [t, roleOf(t as EventType)]));
