import { CANCELLED_BY_USER } from '../../events/boardEvents.ts';
import type { EventData, EventType, NewEventOf } from '../../events/catalog.ts';
import { exhausted } from '../../events/exhaustive.ts';
import { type BoardRun, type BoardState, closedElsewhere, connectedElsewhere, isConnected, isTerminal } from './boardState.ts';
import { offer, offersOnDecline, offersOnDisconnect, offersOnTurnEnd, offerTargets, runsPushedOnConnect, type TurnEnd } from './offers.ts';
import * as one from './oneOffer.ts';
import { knownRepos, unknownRepo } from './repoRule.ts';
import type { RunPast } from './settledRun.ts';

/** The requests the board decides on, each as the server recorded it (see `boardInput`). */
export const BOARD_INPUTS = [
  'board.run.submitted',
  'board.computer.added',
  'board.computer.connected',
  'board.computer.disconnected',
  'board.claim.requested',
  'board.heartbeat.lapsed',
  'board.cancel.requested',
  'board.run.started',
  'board.reply.received',
  'board.completion.received',
  'board.offer.declined',
  'board.offer.stale',
] as const satisfies readonly EventType[];
export type BoardInput = NewEventOf<(typeof BOARD_INPUTS)[number]>;

/** What the board may answer with: every other `board.*` type the catalog holds. */
export type BoardDecision = NewEventOf<
  | 'board.run.queued'
  | 'board.run.deduplicated'
  | 'board.run.offered'
  | 'board.run.claimed'
  | 'board.run.running'
  | 'board.run.cancel.requested'
  | 'board.run.cancelled'
  | 'board.run.replied'
  | 'board.run.finished'
  | 'board.run.resolved'
  | 'board.computer.registered'
  | 'board.computer.online'
  | 'board.computer.offline'
  | 'board.computer.draining'
  | 'board.request.refused'
  | 'board.request.repeated'
>;

type Input = BoardInput;
/** A submission's fields as its caller named them, for a refusal that says which differ. */
const WIRE_NAMES = { lane: 'lane', prompt: 'prompt', agentId: 'agent_id', timeoutS: 'timeout_s', repo: 'repo', base: 'base' } as const;
type Decision = BoardDecision;
type Request = EventData<'board.request.refused'>['request'];
type Refusal = Omit<EventData<'board.request.refused'>, 'request' | 'runId' | 'computerId'>;
/** A refusal, recorded in the request's own stream. */
type Refuse = (request: Request, ids: { runId?: string; computerId?: string }, refusal: Refusal) => Decision[];

/**
 * The board's answer to one input (docs/rules.md#wire-and-cli). Pure: reads `state` and `input.at`, changes
 * neither. A request's first decision is always its answer (see `requestAnswer`); offers follow it.
 */
export function decideBoard(state: BoardState, input: Input): Decision[] {
  const { at } = input;
  const refuse: Refuse = (request, ids, refusal) => [
    { stream: input.stream, at, type: 'board.request.refused', data: { request, ...ids, ...refusal } },
  ];
  switch (input.type) {
    case 'board.run.submitted':
      return submit(state, input.data, at, refuse);
    case 'board.computer.added': {
      const { computerId, tokenHash } = input.data;
      if (state.computers[computerId]) {
        return refuse(
          'computer.add',
          { computerId },
          { status: 409, code: 'computer_exists', reason: { code: 'computer_exists', computer: computerId } },
        );
      }
      return [
        { stream: `computer:${computerId}`, at, type: 'board.computer.registered', data: { computerId, tokenHash, reason: { code: 'registered' } } },
      ];
    }
    case 'board.computer.connected': {
      const { computerId } = input.data;
      if (!state.computers[computerId]) {
        return refuse(
          'connect',
          { computerId },
          { status: 404, code: 'unknown_computer', reason: { code: 'unknown_computer', computer: computerId } },
        );
      }
      const { incarnation, over } = input.data;
      // Inputs of older versions carry no incarnation key: decided as they were, every connection taken.
      if (incarnation !== undefined && connectedElsewhere(state, computerId, input.data.board, incarnation, over)) {
        // The log, not a board's memory, says where a computer is connected: two boards that each let in one
        // of two daemons with the same id have one of them refused here, at the append.
        const elsewhere = state.computers[computerId]!;
        return refuse(
          'connect',
          { computerId },
          {
            status: 409,
            code: 'computer_connected_elsewhere',
            reason: {
              code: 'computer_connected_elsewhere',
              computer: computerId,
              ...(elsewhere.via === undefined ? {} : { board: elsewhere.via }),
              ...(elsewhere.incarnation === undefined ? {} : { incarnation: elsewhere.incarnation }),
            },
          },
        );
      }
      const oneOffer = input.data.oneOffer === true;
      const runs = oneOffer ? [] : runsPushedOnConnect(state, computerId);
      if (!input.data.pushedFromState) {
        // Recorded by an older version, which offered each run in an event of its own: replayed as taken.
        const online: Decision = {
          stream: `computer:${computerId}`,
          at,
          type: 'board.computer.online',
          data: { computerId, reason: { code: 'connected', pushed: 0 } },
        };
        return [online, ...runs.flatMap((run) => offer(run, [computerId], at, { code: 'offered', on: { on: 'connected', computer: computerId } }))];
      }
      const { repos } = input.data;
      const pushed = oneOffer
        ? one.lanesPushedOnConnect(state, computerId, repos).reduce((n, lane) => n + state.lanes[lane]!.unclaimed.length, 0)
        : runs.length;
      const reason = { code: 'connected' as const, pushed };
      const via = input.data.board === undefined ? {} : { board: input.data.board };
      const life = typeof incarnation === 'string' ? { incarnation } : {};
      const policy = oneOffer ? { oneOffer: true as const } : {};
      const has = repos === undefined ? {} : { repos };
      return [
        { stream: `computer:${computerId}`, at, type: 'board.computer.online', data: { computerId, reason, ...via, ...life, ...policy, ...has } },
      ];
    }
    case 'board.computer.disconnected': {
      const { computerId, lastSeenAt } = input.data;
      if (!isConnected(state, computerId) || closedElsewhere(state, computerId, input.data.board)) return [];
      return [
        {
          stream: `computer:${computerId}`,
          at,
          type: 'board.computer.offline',
          data: { computerId, ...(lastSeenAt === undefined ? {} : { lastSeenAt }), reason: { code: 'stream.closed' } },
        },
        ...(input.data.oneOffer ? one.offersOnDisconnect(state, computerId, at) : offersOnDisconnect(state, computerId, at)),
      ];
    }
    case 'board.offer.declined':
      return decline(state, input.data, at);
    case 'board.claim.requested':
      return claim(state, input.data, at, refuse);
    case 'board.offer.stale':
      return offerAgain(state, input.data, at);
    case 'board.heartbeat.lapsed': {
      // Late (the run ended meanwhile) or twice: only an open claim is reaped. `ignores` says the same.
      const run = state.runs[input.data.runId];
      if (!run || !state.open[run.runId]) return [];
      const { lastHeartbeatAt } = input.data;
      const silent = Math.round((at - lastHeartbeatAt) / 1000);
      const reason = { code: 'reaped' as const, computer: run.computerId!, lastHeartbeatAt, silentS: silent };
      return [
        {
          stream: `run:${run.runId}`,
          at,
          type: 'board.run.resolved',
          data: { runId: run.runId, computerId: run.computerId!, lastHeartbeatAt, reason },
        },
        ...turnEndOffers(state, run, at, 'was reaped', input.data.oneOffer),
      ];
    }
    case 'board.cancel.requested':
      return cancel(state, input.data, at, refuse);
    case 'board.run.started': {
      const { runId, computerId } = input.data;
      if (!marksRunning(state, runId, computerId)) return [];
      return [{ stream: `run:${runId}`, at, type: 'board.run.running', data: { runId, computerId, reason: { code: 'first.heartbeat' } } }];
    }
    case 'board.reply.received': {
      const { runId, computerId, text } = input.data;
      const refused = checkHolder(state, 'reply', input.data, refuse);
      if (refused) return refused;
      return [{ stream: `run:${runId}`, at, type: 'board.run.replied', data: { runId, computerId, text } }];
    }
    case 'board.completion.received':
      return complete(state, input.data, at, refuse);
    default:
      return exhausted(input, []);
  }
}

/** Only the first sign of life of a claimed run, from its holder, marks it running. */
export function marksRunning(state: BoardState, runId: string, computerId: string): boolean {
  const run = state.runs[runId];
  return run?.state === 'claimed' && run.computerId === computerId;
}

function submit(state: BoardState, data: EventData<'board.run.submitted'>, at: number, refuse: Refuse): Decision[] {
  const { runId, lane, prompt, agentId, timeoutS, idempotencyKey, repo, base } = data;
  const keyed = idempotencyKey === undefined ? undefined : state.idempotency[idempotencyKey];
  if (keyed !== undefined) {
    const earlier = keyed.runId;
    // A key names one submission: the same body again is a retry, another body is a mistake to say aloud.
    // (Recorded by an older version, which answered any body with the first run: replayed as taken.)
    const differs = !data.bodyChecked
      ? []
      : (['lane', 'prompt', 'agentId', 'timeoutS', 'repo', 'base'] as const).filter((field) => keyed[field] !== data[field]);
    if (differs.length > 0) {
      return refuse(
        'submit',
        { runId: earlier },
        {
          status: 422,
          code: 'idempotency_key_reused',
          reason: { code: 'idempotency_key_reused', key: idempotencyKey!, run: earlier, fields: differs.map((field) => WIRE_NAMES[field]) },
        },
      );
    }
    const reason = { code: 'resubmitted' as const, key: idempotencyKey!, run: earlier };
    return [
      {
        stream: `run:${earlier}`,
        at,
        type: 'board.run.deduplicated',
        data: { runId: earlier, drawnRunId: runId, idempotencyKey: idempotencyKey!, reason },
      },
    ];
  }
  if (state.runs[runId]) return refuse('submit', { runId }, { status: 409, code: 'run_exists', reason: { code: 'run_exists', run: runId } });
  // A name none of the board's computers has (by its latest word) is a typo or a computer not started yet: said now, not by a run failing later.
  if (unknownRepo(state, repo)) {
    return refuse('submit', {}, { status: 422, code: 'unknown_repo', reason: { code: 'unknown_repo', repo: repo!, known: knownRepos(state) } });
  }
  const queued: Decision = {
    stream: `run:${runId}`,
    at,
    type: 'board.run.queued',
    data: {
      runId,
      lane,
      prompt,
      agentId,
      timeoutS,
      submittedOrder: state.submitted,
      ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
      ...(repo === undefined ? {} : { repo }),
      ...(base === undefined ? {} : { base }),
    },
  };
  if (data.oneOffer) {
    const { offers, waits } = one.offerOnSubmit(state, { runId, lane, agentId, ...(repo === undefined ? {} : { repo }) }, at);
    return [waits === undefined ? queued : { ...queued, data: { ...queued.data, waits } }, ...offers];
  }
  const targets = offerTargets(state, lane);
  return [queued, ...offer({ runId, lane, agentId }, targets.computers, at, { code: 'offered', on: { on: 'submitted' }, to: targets.why })];
}

/** Exactly one computer's claim of a run ever succeeds; a lane has one claimed, unfinished turn at a time. */
function claim(state: BoardState, data: EventData<'board.claim.requested'>, at: number, refuse: Refuse): Decision[] {
  const { runId, computerId, incarnation } = data;
  const ids = { runId, computerId };
  if (!state.computers[computerId])
    return refuse('claim', ids, { status: 404, code: 'unknown_computer', reason: { code: 'unknown_computer', computer: computerId } });
  const known = runOf(state, runId, data.past);
  if (!known) return refuse('claim', ids, { status: 404, code: 'unknown_run', reason: { code: 'unknown_run', run: runId } });
  if (isTerminal(known.state)) {
    const beforeClaim = known.state === 'cancelled' && known.computerId === null;
    return refuse('claim', ids, { status: 410, code: 'gone', reason: { code: 'gone', run: runId, state: known.state, beforeClaim } });
  }
  const run = state.runs[runId]!;
  // Under `bound`, a claim without an incarnation is a life of its own (null), never another's; older
  // inputs skipped the check when either side had none, and are re-derived as they were.
  const otherLife = data.bound
    ? (incarnation ?? null) !== run.incarnation
    : run.incarnation !== null && incarnation !== undefined && incarnation !== run.incarnation;
  if (run.computerId === computerId && otherLife) {
    // Two daemons joined as one computer (a copied config): only the life that claimed it runs it.
    return refuse('claim', ids, {
      status: 409,
      code: 'claimed_elsewhere',
      reason: { code: 'claimed_by_another_life', run: runId, computer: computerId, holder: run.incarnation ?? null, asker: incarnation ?? null },
    });
  }
  if (run.computerId === computerId) {
    return [
      {
        stream: `run:${runId}`,
        at,
        type: 'board.request.repeated',
        data: { request: 'claim', ...ids, status: 200, reason: { code: 'claimed.again' } },
      },
    ];
  }
  if (run.computerId !== null) {
    return refuse('claim', ids, {
      status: 409,
      code: 'claimed_elsewhere',
      reason: { code: 'claimed_elsewhere', run: runId, holder: run.computerId },
    });
  }
  const open = state.lanes[run.lane]!.holder;
  if (open !== null) {
    const turn = state.runs[open]!;
    return refuse('claim', ids, {
      status: 409,
      code: 'conversation_busy',
      reason: {
        code: 'conversation_busy',
        lane: run.lane,
        open,
        state: turn.state,
        holder: turn.computerId,
        earlier: turn.submittedOrder < run.submittedOrder,
      },
    });
  }
  const claimed: Decision = {
    stream: `run:${runId}`,
    at,
    type: 'board.run.claimed',
    data: {
      runId,
      computerId,
      ...(incarnation === undefined ? {} : { incarnation }),
      reason: { code: 'claimed', computer: computerId },
      ...(data.bound ? { bound: true as const } : {}),
    },
  };
  return data.oneOffer ? [claimed, ...one.offersOnClaim(state, run, computerId, at)] : [claimed];
}

/**
 * A claim that lost (docs/rules.md#dispatch): another computer holds the run, the run ended, or its lane's
 * turn is busy and the run already waits for it. Its refusal changes nothing the board keeps, so it is
 * answered and not recorded: a run's log rows do not grow with the computers that tried it. Null for
 * any other claim (granted, or refused in a way worth keeping: a twin's, an unknown run's, a first wait).
 */
export function quietRefusal(state: BoardState, input: NewEventOf<'board.claim.requested'>): Decision[] | null {
  if (!input.data.oneOffer || raced(state, input)) return null;
  const decisions = decideBoard(state, input);
  const first = decisions[0];
  if (first?.type !== 'board.request.refused') return null;
  const { code } = first.data;
  const run = state.runs[input.data.runId];
  if (code === 'gone') return decisions;
  if (code === 'claimed_elsewhere' && run?.computerId !== input.data.computerId) return decisions;
  if (code === 'conversation_busy' && run && state.lanes[run.lane]!.waiters.includes(run.runId)) return decisions;
  return null;
}

/** The runs told `conversation_busy` while `run`'s turn lasted, resent as its lane's rule says. */
function turnEndOffers(state: BoardState, run: BoardRun, at: number, how: TurnEnd, oneOffer: true | undefined): Decision[] {
  return oneOffer ? one.offersOnTurnEnd(state, run, at, how) : offersOnTurnEnd(state, run, at, how);
}

/**
 * A run left unclaimed while its lane is free (the offer monitor saw it so): offered again to whom a
 * new run of its lane would go. Claimed meanwhile, its lane taken, nobody connected: nothing to decide.
 */
function offerAgain(state: BoardState, data: EventData<'board.offer.stale'>, at: number): Decision[] {
  const run = state.runs[data.runId];
  if (run?.state !== 'queued' || state.lanes[run.lane]?.holder !== null) return [];
  const waited = Math.round((at - data.unclaimedSince) / 1000);
  if (data.oneOffer) return one.offersWhenStale(state, run, waited, at);
  const targets = offerTargets(state, run.lane);
  return offer(run, targets.computers, at, { code: 'offered', on: { on: 'stale', waitedS: waited }, to: targets.why });
}

/**
 * A connected computer declined an unclaimed run's frame because it drains (docs/rules.md#computer-behaviour): it is
 * offered nothing more in this life, and the run goes to another computer at once. Nothing to do (a
 * run claimed or gone meanwhile, a second decline with nobody new to offer it to) decides nothing.
 */
function decline(state: BoardState, data: EventData<'board.offer.declined'>, at: number): Decision[] {
  const { runId, computerId, reason } = data;
  const run = state.runs[runId];
  if (run?.state !== 'queued' || !isConnected(state, computerId)) return [];
  if (reason !== 'draining') return data.oneOffer ? one.offersOnDecline(state, run, computerId, reason, at) : [];
  const draining: Decision[] = state.draining[computerId]
    ? []
    : [{ stream: `computer:${computerId}`, at, type: 'board.computer.draining', data: { computerId, reason: { code: 'draining', run: runId } } }];
  if (!data.oneOffer) return [...draining, ...offersOnDecline(state, run, computerId, at)];
  const drained: BoardState = { ...state, draining: { ...state.draining, [computerId]: true } };
  return [...draining, ...one.offersOnDecline(drained, run, computerId, reason, at)];
}

function cancel(state: BoardState, data: EventData<'board.cancel.requested'>, at: number, refuse: Refuse): Decision[] {
  const { runId } = data;
  const known = runOf(state, runId, data.past);
  if (!known) return refuse('cancel', { runId }, { status: 404, code: 'unknown_run', reason: { code: 'unknown_run', run: runId } });
  if (isTerminal(known.state))
    return refuse(
      'cancel',
      { runId },
      { status: 409, code: 'already_terminal', reason: { code: 'already_terminal', run: runId, state: known.state } },
    );
  const run = state.runs[runId]!;
  if (run.computerId === null) {
    const reason = { code: 'cancelled.unclaimed' as const, offeredTo: [...run.offeredTo] };
    return [{ stream: `run:${runId}`, at, type: 'board.run.cancelled', data: { runId, offeredTo: [...run.offeredTo], reason } }];
  }
  if (run.cancelRequested) {
    return [
      {
        stream: `run:${runId}`,
        at,
        type: 'board.request.repeated',
        data: { request: 'cancel', runId, status: 202, reason: { code: 'cancel.pending' } },
      },
    ];
  }
  const reason = { code: 'cancel.passed' as const, computer: run.computerId };
  return [{ stream: `run:${runId}`, at, type: 'board.run.cancel.requested', data: { runId, computerId: run.computerId, reason } }];
}

function complete(state: BoardState, data: EventData<'board.completion.received'>, at: number, refuse: Refuse): Decision[] {
  const { runId, computerId, ok, error } = data;
  const usage = { ...(data.usage ? { usage: data.usage } : {}), ...(data.changes ? { changes: data.changes } : {}) };
  const refused = checkHolder(state, 'complete', data, refuse);
  if (refused) return refused;
  const run = state.runs[runId]!;
  const finished: Decision = ok
    ? {
        stream: `run:${runId}`,
        at,
        type: 'board.run.finished',
        data: { runId, computerId, state: 'succeeded', reason: { code: 'completed', state: 'succeeded' }, ...usage },
      }
    : {
        stream: `run:${runId}`,
        at,
        type: 'board.run.finished',
        data: {
          runId,
          computerId,
          state: error === CANCELLED_BY_USER ? 'cancelled' : 'failed',
          error: error ?? 'failed (no error given)',
          reason:
            error === CANCELLED_BY_USER
              ? { code: 'completed', state: 'cancelled' }
              : { code: 'completed', state: 'failed', ...(error ? { error: firstLine(error) } : {}) },
          ...usage,
        },
      };
  return [finished, ...turnEndOffers(state, run, at, 'ended', data.oneOffer)];
}

/** A reply or a completion comes from the computer holding the claim, for a run not yet terminal. */
function checkHolder(
  state: BoardState,
  request: 'reply' | 'complete',
  { runId, computerId, past }: { runId: string; computerId: string; past?: RunPast | undefined },
  refuse: Refuse,
): Decision[] | null {
  const run = runOf(state, runId, past);
  const ids = { runId, computerId };
  if (!run) return refuse(request, ids, { status: 404, code: 'unknown_run', reason: { code: 'unknown_run', run: runId } });
  if (run.computerId !== computerId) {
    return refuse(request, ids, {
      status: 409,
      code: 'not_holder',
      reason: { code: 'not_holder', run: runId, computer: computerId, holder: run.computerId },
    });
  }
  if (isTerminal(run.state))
    return refuse(request, ids, { status: 409, code: 'already_terminal', reason: { code: 'already_terminal', run: runId, state: run.state } });
  return null;
}

/** What a request reads of its run: its state and holder, live from the state or, once it settled, as the input recorded its end. */
type KnownRun = Pick<BoardRun, 'runId' | 'state' | 'computerId'>;

/**
 * The run a request names: live in the state, or settled as the host read it from the run's stream
 * and recorded it on the input (`past`, see RunPastSchema), so that the decision stays a function of
 * (state, input) and `replay` re-derives it from the recorded input alone. Undefined: no such run
 * (or a request recorded by an older version, whose state still held every run it answered about).
 */
function runOf(state: BoardState, runId: string, past: RunPast | undefined): KnownRun | undefined {
  const live = state.runs[runId];
  if (live) return live;
  return past && past !== 'live' ? { runId, state: past.state, computerId: past.computerId } : undefined;
}

/**
 * A request the host recorded as about a live run that settled before it was decided (a completion
 * between the host's look and the decision): not recorded, the host reads the run's end and asks again.
 */
export function raced(state: BoardState, input: { data: { runId: string; past?: RunPast | undefined } }): boolean {
  return input.data.past === 'live' && !state.runs[input.data.runId];
}

function firstLine(text: string): string {
  const line = text.split('\n', 1)[0]!;
  return line.length > 120 ? `${line.slice(0, 117)}...` : line;
}
