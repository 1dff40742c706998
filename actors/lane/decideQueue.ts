import type { EventData, EventType, NewEventOf } from '../../events/catalog.ts';
import { parseStream } from '../../events/envelope.ts';
import { wordExecutionReason } from '../../events/executionReasons.ts';
import { exhausted } from '../../events/exhaustive.ts';
import type { QueueReason } from '../../events/queueReasons.ts';
import { busyBackoffMs, claimRetryMs, claimVerdict, MAX_CLAIM_ATTEMPTS } from './claimAnswer.ts';
import { handledHere } from './handledRun.ts';
import { candidateOf, isParked, limitOf, limitWaitMs, loginOf, type QueueState } from './queueState.ts';
import { readyInOrder } from './readyHeap.ts';

/** What a computer's queue is told: its settings, the board's frames, claim answers, timers, its runs' ends. */
export const QUEUE_INPUTS = [
  'computer.started',
  'computer.configured',
  'scheduler.held',
  'drain.started',
  'frame.received',
  'frame.refused',
  'claim.answered',
  'timer.fired',
  'run.start.failed',
  'run.execution.ended',
  'run.limit.reported',
  'login.limit.due',
] as const satisfies readonly EventType[];
/**
 * Its runs' committed decisions the queue takes as its input (see `Decider.messageScopeOf`): a run that
 * settled, or whose completion was paused unreported, no longer needs its slot and lane.
 */
export const QUEUE_MESSAGES = ['run.settled', 'run.completion.paused'] as const satisfies readonly EventType[];
export type QueueInput = NewEventOf<(typeof QUEUE_INPUTS)[number] | (typeof QUEUE_MESSAGES)[number]>;

/** What the queue decides about its runs, each in its lane's stream (see `decisionsOn`), and its answers to frames. */
export type QueueDecision = NewEventOf<
  | 'frame.acknowledged'
  | 'run.queued'
  | 'run.claim.started'
  | 'run.claimed'
  | 'run.parked'
  | 'run.unparked'
  | 'run.limit.waiting'
  | 'run.limit.resumed'
  | 'run.claim.retrying'
  | 'run.requeued'
  | 'run.skipped'
  | 'run.withdrawn'
  | 'run.ended'
>;

type Input = QueueInput;
type Decision = QueueDecision;
/** A decision about a run before `On` places it: the type and data of one of the queue's decisions. */
type Unplaced = { [T in Decision['type']]: Pick<NewEventOf<T>, 'type' | 'data'> }[Decision['type']];
type On = (runId: string, decision: Unplaced, lane?: string) => Decision;

/**
 * Where a decision about a run is written: its lane's stream (the queue actor is the only writer of a
 * computer's lane streams), or the computer's own stream for a run whose lane it does not know.
 */
function decisionsOn(state: QueueState, input: Input): On {
  const computer = parseStream(input.stream).owner ?? '';
  return (runId, decision, lane = state.runs[runId]?.lane) =>
    // Spelled out rather than spread: a spread of decisions of every shape is the slow path of a copy.
    // (Hence the cast: the compiler does not see that `type` and `data` come from one `Unplaced`.)
    ({
      type: decision.type,
      data: decision.data,
      stream: lane ? `${computer}/lane:${lane}` : `${computer}/computer:${computer}`,
      at: input.at,
    }) as Decision;
}

/**
 * The queue's answer to one input (docs/rules.md#computer-behaviour). Pure: reads `state` and `input.at`, changes
 * neither. Which runs start next is `pickNextRuns`, asked once these answers are folded.
 */
export function decideQueue(state: QueueState, input: Input): Decision[] {
  const on = decisionsOn(state, input);
  switch (input.type) {
    case 'frame.received':
      return answerFrame(state, input.data, parseStream(input.stream).owner ?? '', input.at, on);
    case 'frame.refused':
      return [
        {
          stream: input.stream,
          at: input.at,
          type: 'frame.acknowledged',
          data: { frameId: input.data.frameId, status: 400, reason: { code: 'unreadable', problem: input.data.reason } },
        },
      ];
    case 'claim.answered':
      return answerClaim(state, input.data, input.at, on);
    case 'run.start.failed': {
      const { runId, reason } = input.data;
      if (state.runs[runId]?.status !== 'running') return [];
      return [on(runId, { type: 'run.requeued', data: { runId, reason: { code: 'start.failed', problem: reason } } })];
    }
    case 'run.execution.ended': {
      const { runId, ok, reason } = input.data;
      if (!state.runs[runId]) return [];
      return [ended(runId, ok, reason, on)];
    }
    case 'run.settled':
    case 'run.completion.paused': {
      // Its run's own decision: the result it came to, else (none: resolved before it ran) why it ended, in words.
      const { runId, result, reason } = input.data;
      if (!state.runs[runId]) return [];
      return [ended(runId, result?.ok ?? false, (result?.error ?? wordExecutionReason(reason)).slice(0, 500), on)];
    }
    case 'run.limit.reported':
      return answerLimit(state, input.data, input.at, on);
    case 'computer.started':
    case 'computer.configured':
    case 'scheduler.held':
    case 'drain.started':
    case 'timer.fired':
    case 'login.limit.due':
      // Folded, they may free a slot or wake a run: `pickNextRuns` starts what they allow.
      return [];
    default:
      return exhausted(input, []);
  }
}

/** The run no longer needs its slot and lane: how it went, and the error it failed with, as the audit shows them. */
function ended(runId: string, ok: boolean, error: string | undefined, on: On): Decision {
  const reason: QueueReason = ok ? { code: 'finished' } : error ? { code: 'failed', error } : { code: 'failed' };
  return on(runId, { type: 'run.ended', data: { runId, ok, reason } });
}

function answerFrame(state: QueueState, frame: EventData<'frame.received'>, computer: string, at: number, on: On): Decision[] {
  const ack = (status: 200 | 202 | 503 | 400, reason: QueueReason): Decision =>
    on(
      frame.runId,
      { type: 'frame.acknowledged', data: { frameId: frame.frameId, runId: frame.runId, status, reason } },
      state.runs[frame.runId]?.lane ?? frame.lane,
    );
  if (frame.computerId !== undefined && frame.computerId !== computer) return [ack(200, { code: 'not.addressed', computer: frame.computerId })];
  const run = state.runs[frame.runId];

  if (frame.kind === 'run.cancelled') {
    // A run waiting out a usage limit is claimed: its cancel comes to its run, as any claimed run's.
    if (run?.status === 'waiting' && !run.claimHeld) {
      return [
        ack(202, { code: 'cancelled.unclaimed' }),
        on(frame.runId, { type: 'run.withdrawn', data: { runId: frame.runId, reason: { code: 'withdrawn.cancelled' } } }),
      ];
    }
    if (run) return [ack(202, { code: 'cancel.with.heartbeat' })];
    return [ack(handledHere(frame) ? 202 : 200, { code: 'not.queued' })];
  }
  if (frame.kind === 'run.withdrawn') {
    // Another computer claimed it: a copy waiting here (queued, parked, or waiting to retry its claim)
    // leaves the queue now, rather than when its own claim is refused or its timer runs out.
    if (run?.status === 'waiting' && !run.claimHeld) {
      return [
        ack(202, { code: 'withdrawn.elsewhere' }),
        on(frame.runId, { type: 'run.withdrawn', data: { runId: frame.runId, reason: { code: 'withdrawn.elsewhere' } } }),
      ];
    }
    if (run?.status === 'claiming') return [ack(202, { code: 'claim.in.flight' })];
    if (run) return [ack(200, { code: 'ignored.status', run: frame.runId, status: run.status })];
    return [ack(200, { code: 'ignored.unqueued', run: frame.runId })];
  }
  if (frame.kind === 'run.cancel_requested') {
    // Its run actor decides the cancel (the computer hands the frame to it); the queue only answers the board.
    if (run?.status === 'running') return [ack(202, { code: 'cancel.to.run' })];
    if (run?.status === 'claiming') return [ack(202, { code: 'cancel.with.claim' })];
    if (run?.claimHeld) return [ack(202, { code: 'cancel.to.limited' })];
    return [ack(200, { code: 'ignored.unheld', run: frame.runId })];
  }
  if (frame.kind !== 'run.requested') return [ack(200, { code: 'unknown.kind', kind: frame.kind })];

  if (run) {
    if (run.status === 'waiting' && isParked(run, at)) {
      return [
        ack(202, { code: 'resent.unparked' }),
        on(run.runId, {
          type: 'run.unparked',
          data: { runId: run.runId, reason: { code: 'earlier.turn.ended' } },
        }),
      ];
    }
    return [ack(202, run.status === 'claiming' ? { code: 'resent.claiming' } : { code: 'already', status: run.status })];
  }
  const handled = handledHere(frame);
  if (handled) return [ack(202, { code: 'handled', how: handled })];
  if (state.draining) return [ack(503, { code: 'draining' })];
  if (!frame.lane) return [ack(400, { code: 'no.lane' })];
  return [
    ack(202, { code: 'queued' }),
    on(
      frame.runId,
      { type: 'run.queued', data: { runId: frame.runId, lane: frame.lane, agentId: frame.agentId ?? null, arrival: state.arrivals } },
      frame.lane,
    ),
  ];
}

function answerClaim(state: QueueState, answer: EventData<'claim.answered'>, at: number, on: On): Decision[] {
  const { runId, status, code, skills, start } = answer;
  const run = state.runs[runId];
  // A late answer (the run was withdrawn or settled meanwhile) decides nothing.
  if (run?.status !== 'claiming') return [];
  const skip = (reason: QueueReason, retry = false) => [
    on(runId, { type: 'run.skipped', data: { runId, reason, ...(retry ? { retry: true as const } : {}) } }),
  ];
  const verdict = claimVerdict(status, code);
  switch (verdict.kind) {
    case 'claimed': {
      // What the host read for its start goes on with it: the run actor starts the run from this decision.
      const claimed = { runId, lane: run.lane, skills: skills ?? [], ...(start ? { start } : {}) };
      const login = loginOf(run);
      const limit = limitOf(state, login, at);
      if (limit === null) return [on(runId, { type: 'run.claimed', data: claimed })];
      // Its claim went out before its login met its usage limit (docs/rules.md#computer-behaviour): granted,
      // it is held, claimed and heartbeated, and waits the limit out in its place as a run stopped by it does.
      return [
        on(runId, { type: 'run.claimed', data: { ...claimed, heldUntil: limit.until } }),
        on(runId, {
          type: 'run.limit.waiting',
          data: {
            runId,
            login,
            notBefore: limit.until,
            strikes: limit.strikes,
            words: limit.words,
            reason: { code: 'claimed.at.limit', login },
            logged: false,
          },
        }),
      ];
    }
    case 'busy': {
      if (state.draining) return skip({ code: 'busy.draining' }, true);
      if (run.resentWhileClaiming) {
        return [
          on(runId, {
            type: 'run.requeued',
            data: { runId, reason: { code: 'stale.busy' } },
          }),
        ];
      }
      const waits = run.busyWaits;
      const notBefore = at + busyBackoffMs(waits);
      return [
        on(runId, {
          type: 'run.parked',
          data: { runId, busyWaits: waits + 1, notBefore, reason: { code: 'earlier.turn.open' }, logged: waits === 0 },
        }),
      ];
    }
    case 'elsewhere':
      return skip({ code: 'claimed.elsewhere' });
    case 'gone':
      return skip({ code: 'gone', status });
    case 'retry': {
      const attempts = run.claimAttempts + 1;
      const why = status === 0 ? (code ?? 'network error') : String(status);
      if (state.draining) return skip({ code: 'failed.draining', why }, true);
      if (attempts >= MAX_CLAIM_ATTEMPTS) return skip({ code: 'failed.often', attempts, why }, true);
      const wait = claimRetryMs(run.claimAttempts);
      return [
        on(runId, {
          type: 'run.claim.retrying',
          data: { runId, claimAttempts: attempts, notBefore: at + wait, reason: { code: 'claim.failed', why, waitS: wait / 1000 } },
        }),
      ];
    }
    case 'refused':
      return skip({ code: 'refused', status, ...(code ? { answer: code } : {}) });
  }
}

/**
 * The agent of a running run stopped at its login's usage limit (docs/rules.md#computer-behaviour): the run goes back to its
 * place, still claimed and holding its lane's turn, until the reset the agent gave, or 15 min doubling
 * to 2 h with the login's consecutive limits when it gave none; the login starts nothing until then.
 * A second run of the same login reporting the same limit waits with it and is not said again.
 */
function answerLimit(state: QueueState, report: EventData<'run.limit.reported'>, at: number, on: On): Decision[] {
  const { runId, words, resetAt } = report;
  const run = state.runs[runId];
  if (run?.status !== 'running') return [];
  const login = loginOf(run);
  const holding = limitOf(state, login, at);
  // The reader keeps only a reset ahead of the agent's exit (usageLimit.ts): one past by now was told late
  // (a daemon killed between its run's `run.limit.reached` and this report, started again after it), and
  // has lifted: the run goes again at once.
  const said = resetAt === undefined ? null : Math.max(resetAt, at);
  const strikes = holding ? holding.strikes : (state.loginLimits?.[login]?.strikes ?? 0) + 1;
  const wait = limitWaitMs(strikes);
  const notBefore = Math.max(holding?.until ?? 0, said ?? (holding ? 0 : at + wait));
  const reason: QueueReason =
    said !== null
      ? { code: 'limit.at.reset', login }
      : holding
        ? { code: 'limit.joined', login }
        : { code: 'limit.no.reset', login, waitMin: wait / 60_000 };
  return [
    on(runId, {
      type: 'run.limit.waiting',
      data: { runId, login, notBefore, strikes, words, reason, logged: holding === null },
    }),
  ];
}

/**
 * Which runs to claim now, with the input's own answers already folded: the oldest candidate of each
 * lane, oldest first, while slots are free and their login has room. Reads the ready heap in order,
 * so it never walks the whole queue. A login that is full vetoes its run, which keeps its place.
 */
export function pickNextRuns(state: QueueState, input: Input): Decision[] {
  if (state.held || state.draining) return [];
  let free = state.slots - state.inUse;
  if (free <= 0) return [];
  const on = decisionsOn(state, input);
  const logins: Record<string, number> = {};
  const decisions: Decision[] = [];
  const seen = new Set<string>();
  for (const [, lane] of readyInOrder(state.ready)) {
    if (seen.has(lane)) continue;
    seen.add(lane);
    const candidate = candidateOf(state, lane, input.at);
    if (!candidate) continue;
    const login = loginOf(candidate);
    const capacity = state.loginCapacity[login];
    const used = (state.loginsInUse[login] ?? 0) + (logins[login] ?? 0);
    if (capacity !== undefined && used >= capacity) continue;
    // A login at its usage limit starts nothing until it lifts (its run waiting it out included).
    if (limitOf(state, login, input.at) !== null) continue;
    logins[login] = (logins[login] ?? 0) + 1;
    if (candidate.claimHeld) {
      decisions.push(
        on(candidate.runId, {
          type: 'run.limit.resumed',
          data: { runId: candidate.runId, reason: { code: 'limit.lifted', login } },
        }),
      );
      if (--free <= 0) break;
      continue;
    }
    // A retry speaks for the life of the first claim (it may hold the run), even from a later life.
    // `?? null`: a checkpoint of an older version has no incarnation.
    const incarnation = candidate.claimLife === undefined ? (state.incarnation ?? null) : candidate.claimLife;
    const life = incarnation === null ? {} : { incarnation };
    decisions.push(
      on(candidate.runId, { type: 'run.claim.started', data: { runId: candidate.runId, attempt: candidate.claimAttempts + 1, ...life } }),
    );
    if (--free <= 0) break;
  }
  return decisions;
}
