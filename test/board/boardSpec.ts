import { framesOf } from '../../actors/board/boardAnswers.ts';
import { boardDecider } from '../../actors/board/boardDecider.ts';
import { boardInput } from '../../actors/board/boardInputs.ts';
import { type RunView, runView, settledView } from '../../actors/board/boardQueries.ts';
import { type BoardState, initialBoardState } from '../../actors/board/boardState.ts';
import type { BoardDecision, BoardInput } from '../../actors/board/decideBoard.ts';
import { pastOf, type SettledRun, settledRun } from '../../actors/board/settledRun.ts';
import { wordBoardReason } from '../../events/boardReasons.ts';
import type { DomainEvent, NewDomainEvent } from '../../events/catalog.ts';
import { exhausted } from '../../events/exhaustive.ts';
import { deciderSpec } from '../support/deciderSpec.ts';

export const T0 = Date.UTC(2026, 0, 1);

/** The board's inputs, stamped at `at` ms after T0. */
export const input = {
  submit: (
    runId: string,
    lane: string,
    at = 0,
    extra: { agentId?: string; timeoutS?: number; idempotencyKey?: string; prompt?: string; repo?: string } = {},
  ) =>
    boardInput.submitted(
      {
        runId,
        lane,
        prompt: extra.prompt ?? `prompt of ${runId}`,
        agentId: extra.agentId ?? null,
        timeoutS: extra.timeoutS ?? null,
        ...(extra.idempotencyKey ? { idempotencyKey: extra.idempotencyKey } : {}),
        ...(extra.repo ? { repo: extra.repo } : {}),
      },
      T0 + at,
    ),
  added: (computerId: string, at = 0) => boardInput.computerAdded(computerId, `sha256:${computerId}`, T0 + at),
  /** `repos`: the repositories it announces, the first its default (none: an older computer, which announces nothing). */
  connected: (computerId: string, at = 0, repos?: readonly string[]) =>
    boardInput.connected(computerId, T0 + at, undefined, undefined, repos && { names: [...repos], default: repos[0] ?? null }),
  disconnected: (computerId: string, at = 0, lastSeenAt?: number) =>
    boardInput.disconnected(computerId, T0 + at, lastSeenAt === undefined ? undefined : T0 + lastSeenAt),
  claim: (runId: string, computerId: string, at = 0, incarnation?: string) => boardInput.claim(runId, computerId, T0 + at, incarnation),
  draining: (runId: string, computerId: string, at = 0) => boardInput.declined(runId, computerId, T0 + at),
  stale: (runId: string, unclaimedSince: number, at: number) => boardInput.stale(runId, T0 + unclaimedSince, T0 + at),
  lapsed: (runId: string, lastHeartbeatAt: number, at: number) => boardInput.lapsed(runId, T0 + lastHeartbeatAt, T0 + at),
  cancel: (runId: string, at = 0) => boardInput.cancel(runId, T0 + at),
  started: (runId: string, computerId: string, at = 0) => boardInput.started(runId, computerId, T0 + at),
  reply: (runId: string, computerId: string, text: string, at = 0) => boardInput.reply(runId, computerId, text, T0 + at),
  complete: (runId: string, computerId: string, ok: boolean, error?: string, at = 0) => boardInput.completion(runId, computerId, ok, error, T0 + at),
};

/** Computers added and connected, in order. */
export function computersOnline(...computerIds: string[]): BoardInput[] {
  return computerIds.flatMap((c) => [input.added(c), input.connected(c)]);
}

/**
 * An input as versions before one offer at a time recorded it (no `oneOffer`): decided under the older
 * rule, every computer with room offered a run at once and every claim recorded. Old logs hold these.
 */
export function older<T extends NewDomainEvent>(event: T): T {
  const { oneOffer: _, ...data } = event.data as { oneOffer?: true };
  return { ...event, data } as T;
}

/** `input`, as older versions recorded each (see `older`). */
export const olderInput = Object.fromEntries(
  Object.entries(input).map(([name, make]) => [name, (...args: never[]) => older((make as (...a: never[]) => BoardInput)(...args))]),
) as typeof input;

/** `computersOnline`, as older versions recorded the connects. */
export function olderComputersOnline(...computerIds: string[]): BoardInput[] {
  return computersOnline(...computerIds).map(older);
}

/**
 * given / when / then for the board decider (see deciderSpec): inputs, or events it only folds (an
 * adoption). A request about a run is handed over as the host hands it (`BoardHost.decideAbout`): with
 * what the host read of the run first, `live` from the state or its end from its stream (`past`), the
 * streams being every event given and decided so far. `view` is `GET /v1/runs/{id}`'s body.
 */
export function boardSpec(...given: NewDomainEvent[]) {
  const log = new StreamLog();
  const spec = deciderSpec(boardDecider, initialBoardState(), []);
  const logged = (stream: string) => log.stream(stream);
  const record = (events: readonly NewDomainEvent[]) => log.record(events);
  const when = (event: NewDomainEvent) => {
    const asked = withPast(spec.state, event, (runId) => logged(`run:${runId}`));
    const decisions = spec.when(asked as BoardInput);
    record(decisions === null ? [] : [asked, ...decisions]);
    return decisions;
  };
  for (const event of given) {
    if (boardDecider.isInput(event)) when(event);
    else {
      spec.when(event as BoardInput);
      record([event]);
    }
  }
  return {
    when: (event: BoardInput) => when(event),
    /** The answer to a request the board ignores but answers (a claim that lost): decided, never recorded. */
    unrecorded: (event: BoardInput) =>
      boardDecider.unrecorded!(spec.state, withPast(spec.state, event, (runId) => logged(`run:${runId}`)) as BoardInput),
    get state() {
      return spec.state;
    },
    view(runId: string): RunView | null {
      const live = runView(spec.state, runId);
      if (live) return live;
      const settled = settledRun(logged(`run:${runId}`));
      return settled ? settledView(settled) : null;
    },
    /** The run's end as its stream tells it (a settled run has left the state). */
    settled: (runId: string) => settledRun(logged(`run:${runId}`)),
  };
}

/** Every event given and decided, by stream: what the host reads a settled run's end from. */
export class StreamLog {
  private readonly streams = new Map<string, NewDomainEvent[]>();

  record(events: readonly NewDomainEvent[]): void {
    for (const event of events) (this.streams.get(event.stream) ?? this.streams.set(event.stream, []).get(event.stream)!).push(event);
  }

  /** Its events, as `settledRun` reads them (it needs no seq). */
  stream(stream: string): DomainEvent[] {
    return (this.streams.get(stream) ?? []) as DomainEvent[];
  }

  settled(runId: string): SettledRun | null {
    return settledRun(this.stream(`run:${runId}`));
  }
}

/** A request about a run, with `past` as the host reads it (a request that names one already keeps it). */
export function withPast(state: BoardState, event: NewDomainEvent, stream: (runId: string) => DomainEvent[]): NewDomainEvent {
  switch (event.type) {
    case 'board.claim.requested':
    case 'board.cancel.requested':
    case 'board.reply.received':
    case 'board.completion.received': {
      if (event.data.past !== undefined) return event;
      const { runId } = event.data;
      const past = state.runs[runId] ? 'live' : pastOf(settledRun(stream(runId)));
      return { ...event, data: { ...event.data, past } } as NewDomainEvent;
    }
    default:
      return event;
  }
}

/** A decision's data with its reason (and a queuing's `waits`) worded as the audit words them. */
export function said(decision: BoardDecision): Record<string, unknown> {
  const data: Record<string, unknown> = { ...decision.data };
  if ('reason' in decision.data) data.reason = wordBoardReason(decision.data.reason);
  if ('waits' in decision.data && decision.data.waits !== undefined) data.waits = wordBoardReason(decision.data.waits);
  return data;
}

/** Decisions reduced to what a rule speaks of. */
export function summary(decisions: readonly BoardDecision[] | null): string[] {
  if (decisions === null) return ['(ignored)'];
  return decisions.map((d) => {
    switch (d.type) {
      case 'board.run.queued':
        return `queued ${d.data.runId} #${d.data.submittedOrder}`;
      case 'board.run.deduplicated':
        return `deduplicated ${d.data.drawnRunId} → ${d.data.runId}`;
      case 'board.run.offered':
        return `offered ${d.data.runId} → ${d.data.computers.join(',')}`;
      case 'board.run.claimed':
        return `claimed ${d.data.runId} by ${d.data.computerId}`;
      case 'board.run.running':
        return `running ${d.data.runId}`;
      case 'board.run.cancel.requested':
        return `cancel pending ${d.data.runId}`;
      case 'board.run.cancelled':
        return `cancelled ${d.data.runId} → ${d.data.offeredTo.join(',') || '(nobody)'}`;
      case 'board.run.replied':
        return `replied ${d.data.runId}`;
      case 'board.run.finished':
        return `finished ${d.data.runId} ${d.data.state}`;
      case 'board.run.resolved':
        return `resolved ${d.data.runId}`;
      case 'board.request.refused':
        return `refused ${d.data.request} ${d.data.status} ${d.data.code}`;
      case 'board.request.repeated':
        return `repeated ${d.data.request} ${d.data.status}`;
      case 'board.computer.draining':
        return `draining ${d.data.computerId}`;
      case 'board.computer.registered':
      case 'board.computer.online':
      case 'board.computer.offline':
        return `${d.type.slice('board.computer.'.length)} ${d.data.computerId}`;
      default:
        return exhausted(d, '(a decision this summary does not know)');
    }
  });
}

/** The frames decisions push once committed, read as `kind run → computer` (a connect's are read from `state`). */
export function pushed(decisions: readonly BoardDecision[] | null, state: BoardState): string[] {
  return (decisions ?? []).flatMap((d, i) =>
    framesOf({ ...d, seq: 100 + i }, state).map((f) => `${f.frame.kind} ${f.frame.data.run_id} → ${f.computerId}`),
  );
}
