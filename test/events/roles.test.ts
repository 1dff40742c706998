import { describe, expect, it } from 'vitest';
import { heardOf } from '../../actors/board/inbox/noticeKinds.ts';
import { type DomainEvent, eventDefinitions, eventRoles } from '../../events/catalog.ts';
import { ROLES } from '../../projections/audit/summaryRoles.ts';

/** An event of `type` with the fields `heardOf` reads: enough to learn what a subscription hears it as. */
function anEvent(type: string): DomainEvent {
  const data = { runId: 'r1', lane: 'l1', computerId: 'c1', sessionId: 's1', state: 'succeeded' };
  return { seq: 7, at: 1_000, stream: 'c1/session:s1', type, data } as unknown as DomainEvent;
}

describe("each event group's table of roles (events/roles.ts)", () => {
  it('has one row for every type of the catalog, and none for a type it lacks', () => {
    expect(Object.keys(eventRoles).sort()).toEqual(Object.keys(eventDefinitions).sort());
  });

  it('says what a subscription hears each type as, as heardOf hears it', () => {
    for (const type of Object.keys(eventDefinitions)) {
      const heard = heardOf(anEvent(type), { runLanes: {}, sessionLanes: {} });
      expect({ type, notice: heard?.kind ?? null }).toEqual({ type, notice: eventRoles[type as keyof typeof eventRoles].notice });
    }
  });

  it('is what the audit summary counts each type in', () => {
    expect(ROLES['run.parked']).toBe('queue');
    expect(ROLES['board.request.refused']).toBe('board');
    expect(ROLES['session.close.deferred']).toBe('sessions');
    expect(ROLES['run.settled']).toBe('none');
  });

  it('tells as the daemon runs the decisions worth a line, a wait on its first time only', () => {
    const told = Object.entries(eventRoles).filter(([, roles]) => roles.told !== false);
    expect(Object.fromEntries(told.map(([type, roles]) => [type, roles.told]))).toEqual({
      ...Object.fromEntries(
        [
          'run.queued',
          'run.claimed',
          'run.limit.resumed',
          'run.skipped',
          'run.withdrawn',
          'run.completion.requested',
          'run.completion.retrying',
          'run.settled',
          'run.cancel.decided',
          'run.resolved.elsewhere',
          'lane.session.remembered',
          'board.run.queued',
          'board.run.resolved',
          'board.run.finished',
          'board.request.rejected',
          'board.requests.refused',
          'board.computer.draining',
          'frame.refused',
          'session.closed',
          'session.close.deferred',
          'session.close.incident',
          'hook.exited',
          'hook.interrupted',
          'adoption.adopted',
          'adoption.failed',
          'inbox.waiting',
          'inbox.withheld',
        ].map((type) => [type, true]),
      ),
      'run.parked': 'when.logged',
      'run.limit.waiting': 'when.logged',
    });
  });
});
