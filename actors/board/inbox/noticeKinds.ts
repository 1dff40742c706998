import type { z } from 'zod';
import type { DomainEvent, TypesWhere } from '../../../events/catalog.ts';
import { parseStream } from '../../../events/envelope.ts';
import { ignoreRest } from '../../../events/exhaustive.ts';
import { NoticeKindSchema, type NoticeSourceSchema } from '../../../events/notificationEvents.ts';

export type NoticeKind = z.infer<typeof NoticeKindSchema>;
export const NOTICE_KINDS: readonly NoticeKind[] = NoticeKindSchema.options;
export type NoticeSource = z.infer<typeof NoticeSourceSchema>;
/** What an event is heard as, before it is matched to a subscription. */
export type Heard = Omit<NoticeSource, 'subscriptionId'>;

/** The lanes a notice needs that its event does not carry: of a run (from its queuing), of a session (from its last run). */
export interface LaneBook {
  runLanes: Record<string, string>;
  sessionLanes: Record<string, string>;
}

/** What a committed event is heard as by subscriptions, or null when no subscription can hear it. Pure. */
export function heardOf(event: DomainEvent, lanes: LaneBook): Heard | null {
  const base = { source: event.seq, sourceAt: event.at };
  const run = (kind: NoticeKind, runId: string, extra: Partial<Heard> = {}): Heard => {
    const lane = lanes.runLanes[runId];
    return { ...base, kind, runId, ...(lane ? { lane } : {}), ...extra };
  };
  switch (event.type) {
    case 'board.run.queued':
      return { ...base, kind: 'run.queued', runId: event.data.runId, lane: event.data.lane };
    case 'board.run.claimed':
      return run('run.claimed', event.data.runId, { computerId: event.data.computerId });
    case 'board.run.running':
      return run('run.started', event.data.runId, { computerId: event.data.computerId });
    case 'board.run.finished':
      return run('run.ended', event.data.runId, { computerId: event.data.computerId, state: event.data.state });
    case 'board.run.resolved':
      return run('run.ended', event.data.runId, { computerId: event.data.computerId, state: 'resolved' });
    case 'board.run.cancelled':
      return run('run.ended', event.data.runId, { state: 'cancelled' });
    case 'session.closed': {
      const lane = lanes.sessionLanes[event.data.sessionId];
      const computerId = parseStream(event.stream).owner;
      return {
        ...base,
        kind: 'session.closed',
        about: event.data.sessionId,
        state: 'closed',
        ...(lane ? { lane } : {}),
        ...(computerId ? { computerId } : {}),
      };
    }
    case 'adoption.adopted':
      return {
        ...base,
        kind: 'lane.adopted',
        lane: event.data.lane,
        about: event.data.sessionId,
        computerId: event.data.computerId,
        state: 'adopted',
      };
    case 'board.computer.online':
      return { ...base, kind: 'computer.online', computerId: event.data.computerId };
    case 'board.computer.offline':
      return { ...base, kind: 'computer.offline', computerId: event.data.computerId };
    default:
      ignoreRest<Unheard>(event);
      return null;
  }
}

/** What no subscription hears: each type says what it is heard as in its group's table (events/roles.ts). */
type Unheard = TypesWhere<'notice', null>;

/** Board-level kinds are heard whatever lane a subscription names. */
const LANELESS: ReadonlySet<NoticeKind> = new Set(['computer.online', 'computer.offline']);

export function hears(subscription: { lane: string | null; kinds: readonly NoticeKind[] }, heard: Heard): boolean {
  if (!subscription.kinds.includes(heard.kind)) return false;
  return subscription.lane === null || LANELESS.has(heard.kind) || heard.lane === subscription.lane;
}

/** The one line an agent reads for a notice. */
export function noticeText(heard: Heard): string {
  const ofLane = heard.lane ? ` of lane ${heard.lane}` : '';
  switch (heard.kind) {
    case 'run.queued':
      return `run ${heard.runId} was queued${heard.lane ? ` in lane ${heard.lane}` : ''}`;
    case 'run.claimed':
      return `run ${heard.runId}${ofLane} was claimed by computer ${heard.computerId}`;
    case 'run.started':
      return `run ${heard.runId}${ofLane} started on computer ${heard.computerId}`;
    case 'run.ended':
      return `run ${heard.runId}${ofLane} ended: ${heard.state}`;
    case 'session.closed':
      return `session ${heard.about}${heard.lane ? ` (lane ${heard.lane})` : ''} was closed`;
    case 'lane.adopted':
      return `lane ${heard.lane} now runs its turns in session ${heard.about} on computer ${heard.computerId}`;
    case 'computer.online':
      return `computer ${heard.computerId} came online`;
    case 'computer.offline':
      return `computer ${heard.computerId} went offline`;
  }
}
