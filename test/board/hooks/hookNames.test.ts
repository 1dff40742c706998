import { describe, expect, it } from 'vitest';
import { hookOf, hookPayload, parseHook } from '../../../apps/board/chores/hooks/hookNames.ts';
import type { DomainEvent } from '../../../events/catalog.ts';
import { T0 } from '../../support/events.ts';

const event = (type: string, data: unknown, stream = 'run:r1'): DomainEvent =>
  ({ seq: 7, stream, version: 2, type, data, at: T0, cause: 6, actor: 'box:1' }) as DomainEvent;

describe('hooks: which committed decision calls which hook', () => {
  it("given the board's run decisions, then claimed, running and each kind of end call on_run_claimed, on_run_started and on_run_ended", () => {
    expect(hookOf(event('board.run.claimed', { runId: 'r1', computerId: 'c1', reason: 'x' }))).toEqual({
      hook: 'on_run_claimed',
      runId: 'r1',
      state: 'claimed',
    });
    expect(hookOf(event('board.run.running', { runId: 'r1', computerId: 'c1', reason: 'x' }))).toEqual({
      hook: 'on_run_started',
      runId: 'r1',
      state: 'running',
    });
    expect(hookOf(event('board.run.finished', { runId: 'r1', computerId: 'c1', state: 'failed', reason: 'x' }))).toEqual({
      hook: 'on_run_ended',
      runId: 'r1',
      state: 'failed',
    });
    expect(hookOf(event('board.run.resolved', { runId: 'r1', computerId: 'c1', lastHeartbeatAt: T0, reason: 'x' }))).toEqual({
      hook: 'on_run_ended',
      runId: 'r1',
      state: 'resolved',
    });
    expect(hookOf(event('board.run.cancelled', { runId: 'r1', offeredTo: [], reason: 'x' }))).toEqual({
      hook: 'on_run_ended',
      runId: 'r1',
      state: 'cancelled',
    });
  });

  it("given a session's confirmed close and a round's tick, then on_session_closed and on_tick; inputs and other decisions call none", () => {
    expect(hookOf(event('session.closed', { sessionId: 'S1', attempt: 1, reason: 'idle' }, 'c1/session:S1'))).toEqual({
      hook: 'on_session_closed',
      sessionId: 'S1',
      state: 'closed',
    });
    expect(hookOf(event('hook.tick.due', { counts: {} }, 'hooks:tick'))).toEqual({ hook: 'on_tick' });
    expect(hookOf(event('board.claim.requested', { runId: 'r1', computerId: 'c1' }))).toBeNull();
    expect(hookOf(event('board.run.queued', { runId: 'r1', lane: 'L', prompt: 'p', agentId: null, timeoutS: null, submittedOrder: 0 }))).toBeNull();
    expect(hookOf(event('session.close.deferred', { sessionId: 'S1', attempt: 1, reason: 'working', unread: null }, 'c1/session:S1'))).toBeNull();
  });

  it('the payload is {hook, run_id?, lane?, session_id?, state?, at}, with only what the decision names', () => {
    expect(hookPayload({ hook: 'on_run_ended', runId: 'r1', state: 'succeeded' }, T0, 'L')).toEqual({
      hook: 'on_run_ended',
      run_id: 'r1',
      lane: 'L',
      state: 'succeeded',
      at: T0,
    });
    expect(hookPayload({ hook: 'on_tick' }, T0, null)).toEqual({ hook: 'on_tick', at: T0 });
  });

  it('--hook NAME=COMMAND keeps everything after the first =; an unknown name or an empty command is refused, naming the known ones', () => {
    expect(parseHook('on_run_ended=curl -d @- http://x/?a=b')).toEqual(['on_run_ended', 'curl -d @- http://x/?a=b']);
    expect(() => parseHook('on_run_done=true')).toThrow(
      '--hook wants NAME=COMMAND with NAME one of on_run_claimed, on_run_started, on_run_ended, on_session_closed, on_tick, not "on_run_done"',
    );
    expect(() => parseHook('on_tick=')).toThrow('--hook on_tick= names no command');
  });
});
