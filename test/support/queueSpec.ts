import type { QueueDecision, QueueInput } from '../../actors/lane/decideQueue.ts';
import { queueDecider } from '../../actors/lane/queueDecider.ts';
import { initialQueueState } from '../../actors/lane/queueState.ts';
import type { NewEventOf } from '../../events/catalog.ts';
import { deciderSpec } from './deciderSpec.ts';
import { withHandled } from './handledShell.ts';

export const COMPUTER = 'c1';
export const T0 = Date.UTC(2026, 0, 1);

/**
 * Inputs of one computer, stamped at `at` ms after T0: a frame in its lane's stream, the inputs whose
 * lane the test does not name in the computer's stream (either is the queue's).
 */
export const input = {
  configured: (slots: number, loginCapacity: Record<string, number> = {}, at = 0): NewEventOf<'computer.configured'> => ({
    stream: `${COMPUTER}/computer:${COMPUTER}`,
    type: 'computer.configured',
    data: { slots, loginCapacity },
    at: T0 + at,
  }),
  held: (held: boolean, at = 0): NewEventOf<'scheduler.held'> => ({
    stream: `${COMPUTER}/computer:${COMPUTER}`,
    type: 'scheduler.held',
    data: { held, reason: held ? 'held by test' : 'released by test' },
    at: T0 + at,
  }),
  drain: (at = 0): NewEventOf<'drain.started'> => ({
    stream: `${COMPUTER}/computer:${COMPUTER}`,
    type: 'drain.started',
    data: { reason: 'SIGTERM' },
    at: T0 + at,
  }),
  frame: (
    runId: string,
    lane: string,
    at = 0,
    extra: { agentId?: string; computerId?: string; kind?: string } = {},
  ): NewEventOf<'frame.received'> => ({
    stream: `${COMPUTER}/lane:${lane}`,
    type: 'frame.received',
    data: {
      frameId: `f-${runId}-${at}`,
      kind: extra.kind ?? 'run.requested',
      runId,
      lane,
      ...(extra.agentId ? { agentId: extra.agentId } : {}),
      ...(extra.computerId ? { computerId: extra.computerId } : {}),
    },
    at: T0 + at,
  }),
  cancelFrame: (runId: string, at = 0): NewEventOf<'frame.received'> => ({
    stream: `${COMPUTER}/computer:${COMPUTER}`,
    type: 'frame.received',
    data: { frameId: `c-${runId}-${at}`, kind: 'run.cancelled', runId },
    at: T0 + at,
  }),
  answer: (runId: string, status: number, at = 0, code?: string): NewEventOf<'claim.answered'> => ({
    stream: `${COMPUTER}/computer:${COMPUTER}`,
    type: 'claim.answered',
    data: { runId, status, ...(code ? { code } : {}), ...(status === 200 ? { skills: [] } : {}) },
    at: T0 + at,
  }),
  timer: (runId: string, at: number): NewEventOf<'timer.fired'> => ({
    stream: `${COMPUTER}/computer:${COMPUTER}`,
    type: 'timer.fired',
    data: { runId },
    at: T0 + at,
  }),
  startFailed: (runId: string, at = 0): NewEventOf<'run.start.failed'> => ({
    stream: `${COMPUTER}/computer:${COMPUTER}`,
    type: 'run.start.failed',
    data: { runId, reason: 'spawn failed' },
    at: T0 + at,
  }),
  ended: (runId: string, at = 0, ok = true): NewEventOf<'run.execution.ended'> => ({
    stream: `${COMPUTER}/computer:${COMPUTER}`,
    type: 'run.execution.ended',
    data: { runId, ok },
    at: T0 + at,
  }),
};

/** given / when / then for the queue decider (see deciderSpec). */
export function queueSpec(...given: QueueInput[]) {
  return deciderSpec(queueDecider, initialQueueState(), given, withHandled);
}

/** Decisions reduced to what a rule speaks of: `type run` plus the data that matters. */
export function summary(decisions: readonly QueueDecision[] | null): string[] {
  if (decisions === null) return ['(ignored)'];
  return decisions.map((d) => {
    const id = 'runId' in d.data && d.data.runId !== undefined ? d.data.runId : d.stream.slice(d.stream.indexOf(':') + 1);
    switch (d.type) {
      case 'frame.acknowledged':
        return `ack ${d.data.status} ${id}`.trim();
      case 'run.parked':
        return `parked ${id} waits=${d.data.busyWaits} +${d.data.notBefore - d.at}ms${d.data.logged ? ' logged' : ''}`;
      case 'run.claim.retrying':
        return `retrying ${id} attempts=${d.data.claimAttempts} +${d.data.notBefore - d.at}ms`;
      case 'run.claim.started':
        return `claim ${id} #${d.data.attempt}`;
      default:
        return `${d.type.replace(/^run\./, '')} ${id}`;
    }
  });
}
