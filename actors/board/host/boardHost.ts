import { randomUUID } from 'node:crypto';
import type { Subscription } from 'rxjs';
import type { DomainEvent } from '../../../events/catalog.ts';
import type { EventStore } from '../../../events/store/eventStore.ts';
import type { Usage } from '../../../events/usage.ts';
import { idsStartingWith } from '../../../projections/audit/runIdPrefix.ts';
import { boardProjection } from '../../../projections/board.ts';
import { hydrateStates } from '../../../projections/hydrate.ts';
import { hashToken, runToken, sameSecret } from '../../../wire/tokens.ts';
import type { Clock } from '../../runtime/clock.ts';
import { DecidingActor } from '../../runtime/decidingActor.ts';
import type { ActorSystem } from '../../runtime/runtime.ts';
import { type FailureLog, stderrLog } from '../../runtime/untilRecorded.ts';
import { framesOf, type RequestAnswer, requestAnswer } from '../boardAnswers.ts';
import { BOARD_STREAM_KINDS, boardDecider } from '../boardDecider.ts';
import { boardInput } from '../boardInputs.ts';
import { cancelAnswer, claimedRunBody, heartbeatAnswer, idleNextTurns, needsLog, openClaims, runView, tokenHashOf } from '../boardQueries.ts';
import { type BoardState, isTerminal } from '../boardState.ts';
import type { BoardDecision, BoardInput } from '../decideBoard.ts';
import { LeaseMonitor } from './leaseMonitor.ts';
import { OfferMonitor } from './offerMonitor.ts';
import { PushHub } from './pushHub.ts';
import { RunProgress } from './runProgress.ts';
import { SubmitTokens } from './submitTokens.ts';

export interface Answer {
  readonly status: number;
  readonly body: unknown;
}

export interface BoardHostOptions {
  readonly system: ActorSystem;
  readonly store: EventStore;
  readonly clock: Clock;
  readonly boardSecret: string;
  /** The token file's (a SQLite board); null on PostgreSQL, whose submit tokens are all `runledger token add`'s. */
  readonly submitToken: string | null;
  readonly leaseMs?: number;
  /** A connection refused because its computer is connected elsewhere: recorded at the edge. */
  readonly refusedStream?: (computerId: string, incarnation: string | null) => void;
  /** The daemon's log (stderr when not given): what failed outside a request, and went on. */
  readonly log?: FailureLog;
}

const refused = (status: number, code: string, message = code): Answer => ({ status, body: { detail: { error: code, message } } });

/**
 * The board as a service: each request becomes an input of the board actor, and its answer is read
 * from the decisions taken (SPEC section 7). Frames follow the commit; heartbeats touch the lease in
 * memory; tokens are checked here, before anything is recorded.
 */
export class BoardHost {
  readonly actor: DecidingActor<BoardState, BoardInput, BoardDecision>;
  readonly push: PushHub;
  /** What each open run's agent is doing, from its heartbeats: in memory only. */
  readonly progress = new RunProgress();
  private readonly lease: LeaseMonitor;
  private readonly offers: OfferMonitor;
  private foreign: Subscription | null = null;
  private readonly submitTokens: SubmitTokens;

  constructor(private readonly options: BoardHostOptions) {
    const { system, store, clock } = options;
    this.submitTokens = new SubmitTokens(store, options.submitToken);
    this.actor = new DecidingActor(system, store, {
      name: 'board',
      decider: boardDecider,
      clock,
      hydrate: async () => (await hydrateStates(store, [boardProjection]))[0],
      // Its state is shared by all its streams (lanes, the submission order): with several boards on one
      // log (SPEC 8), a decision taken before another board's was seen is refused and taken again.
      guardKinds: BOARD_STREAM_KINDS,
      afterCommit: (state, decisions) => this.afterCommit(state, decisions),
    });
    this.push = new PushHub(
      {
        // Each says which board holds (or held) the stream: a late close from a board the computer left ends nothing (SPEC 8).
        connected: async (computerId) => void (await this.actor.input(boardInput.connected(computerId, clock.now(), store.writer))),
        disconnected: async (computerId, lastSeenAt) =>
          void (await this.actor.input(boardInput.disconnected(computerId, clock.now(), lastSeenAt, store.writer))),
        declined: async (computerId, runId) => void (await this.actor.input(boardInput.declined(runId, computerId, clock.now()))),
        refused: (computerId, incarnation) => options.refusedStream?.(computerId, incarnation),
      },
      clock,
      options.log ?? stderrLog,
    );
    this.lease = new LeaseMonitor(
      clock,
      options.leaseMs ?? 90_000,
      () => this.actor.read((state) => openClaims(state).filter((claim) => this.mayReap(state, claim.computerId))),
      async (runId, last) => void (await this.actor.input(boardInput.lapsed(runId, last, clock.now()))),
      options.log ?? stderrLog,
    );
    this.offers = new OfferMonitor(
      clock,
      () => this.actor.read(idleNextTurns),
      async (runId, since) => void (await this.actor.input(boardInput.stale(runId, since, clock.now()))),
      options.log ?? stderrLog,
    );
  }

  /**
   * Connections recorded by a board that stopped are stale: they are closed first. Then the lease
   * monitor starts, and board events the actor did not append itself (another process, a one-shot
   * command) make it rehydrate.
   */
  async start(): Promise<void> {
    const stale = await this.actor.read((state) => [...state.connected]);
    for (const computerId of stale) await this.actor.input(boardInput.disconnected(computerId, this.options.clock.now()));
    this.lease.start();
    this.offers.start();
    const head = await this.options.store.headSeq();
    await this.submitTokens.refresh();
    this.foreign = this.options.store.subscribe(head).subscribe((event) => {
      if (event.type === 'token.added') void this.submitTokens.refresh();
      if (boardDecider.scopeOf(event) === null) return;
      this.actor.observe(event);
      // Another board on the same log (PostgreSQL, SPEC 8) decided it: its frames go down the streams this one holds.
      if (event.actor !== this.options.store.writer) void this.actor.read((state) => this.push.send(framesOf(event, state)));
    });
  }

  stop(): void {
    this.foreign?.unsubscribe();
    this.lease.stop();
    this.offers.stop();
    this.push.close();
    this.actor.stop();
  }

  /** Whether `token` is a submit token this board knows now (the web view's check). */
  /**
   * Heartbeats come to the board that holds the computer's stream: a claim is reaped by that board, or
   * by any when its computer is connected to none (each lapse is appended at an expected version, so
   * one wins). A claim of a computer another board serves is that board's to reap.
   */
  private mayReap(state: BoardState, computerId: string): boolean {
    return this.push.holds(computerId) || !state.connected.includes(computerId);
  }

  isSubmitToken(token: string | null): boolean {
    return this.submitTokens.knows(token);
  }

  /** Whether `token` is a submit token, one recorded a moment ago by another process included (the API's check). */
  acceptsSubmitToken(token: string | null): Promise<boolean> {
    return this.submitTokens.accepts(token);
  }

  /** The computer a token belongs to, checked against the stored hash. */
  async isComputerToken(computerId: string, token: string | null): Promise<boolean> {
    if (token === null) return false;
    const stored = await this.actor.read((state) => tokenHashOf(state, computerId));
    return stored !== null && sameSecret(hashToken(token), stored);
  }

  async submit(
    body: { lane: string; prompt: string; agent_id?: string | null; timeout_s?: number | null },
    idempotencyKey?: string,
  ): Promise<Answer> {
    const input = boardInput.submitted(
      {
        runId: randomUUID(),
        lane: body.lane,
        prompt: body.prompt,
        agentId: body.agent_id ?? null,
        timeoutS: body.timeout_s ?? null,
        ...(idempotencyKey ? { idempotencyKey } : {}),
      },
      this.options.clock.now(),
    );
    const answer = await this.decide(input);
    return 'code' in answer ? refused(answer.status, answer.code, answer.reason) : { status: 201, body: { run_id: answer.runId } };
  }

  /** `incarnation`: the claiming daemon's life, from `Runledger-Incarnation` (absent from older computers). */
  async claim(computerId: string, runId: string, incarnation?: string): Promise<Answer> {
    const answer = await this.decide(boardInput.claim(runId, computerId, this.options.clock.now(), incarnation));
    if ('code' in answer) return refused(answer.status, answer.code, answer.reason);
    this.lease.touch(runId);
    const run = await this.actor.read((state) => claimedRunBody(state, runId));
    return { status: 200, body: { run, run_token: runToken(this.options.boardSecret, runId, computerId), skills: [] } };
  }

  /** The computer a run token speaks for: the run's holder, if the token is the one its claim got. */
  async runTokenHolder(runId: string, token: string | null): Promise<string | null> {
    if (token === null) return null;
    const computerId = await this.actor.read((state) => state.runs[runId]?.computerId ?? null);
    if (computerId === null) return null;
    return sameSecret(token, runToken(this.options.boardSecret, runId, computerId)) ? computerId : null;
  }

  /**
   * Heartbeats are answered from the state and not recorded, except the first, which marks it running;
   * their `progress` is kept in memory (RunProgress), never in the log.
   */
  async heartbeat(runId: string, computerId: string, progress?: string): Promise<Answer> {
    const answer = await this.actor.read((state) => heartbeatAnswer(state, runId, computerId));
    if (answer.status !== 200) return refused(answer.status, answer.code);
    this.lease.touch(runId);
    if (progress !== undefined) this.progress.heard(runId, progress, this.options.clock.now());
    if (answer.markRunning) await this.actor.input(boardInput.started(runId, computerId, this.options.clock.now()), { failFast: true });
    return { status: 200, body: { cancel_requested: answer.cancelRequested } };
  }

  async reply(runId: string, computerId: string, text: string): Promise<Answer> {
    const answer = await this.decide(boardInput.reply(runId, computerId, text, this.options.clock.now()));
    return 'code' in answer ? refused(answer.status, answer.code, answer.reason) : { status: 200, body: { ok: true } };
  }

  async complete(runId: string, computerId: string, ok: boolean, error?: string, usage?: Usage): Promise<Answer> {
    const answer = await this.decide(boardInput.completion(runId, computerId, ok, error, this.options.clock.now(), usage));
    return 'code' in answer ? refused(answer.status, answer.code, answer.reason) : { status: 200, body: { ok: true } };
  }

  async cancel(runId: string): Promise<Answer> {
    const answer = await this.decide(boardInput.cancel(runId, this.options.clock.now()));
    if ('code' in answer) return refused(answer.status, answer.code, answer.reason);
    // What was decided, in words the CLI prints: `stopping on c1`, `withdrawn before it was claimed`.
    const body = await this.actor.read((state) => cancelAnswer(state, runId));
    return { status: 202, body: body ?? { run_id: runId } };
  }

  async run(runId: string): Promise<Answer> {
    // A terminal run's reply is in the log only (its last `board.run.replied`), read through its stream;
    // terminal is for good, so the second read finds it terminal too.
    const first = await this.actor.read((state) => (needsLog(state, runId) ? 'terminal' : runView(state, runId)));
    let view = first === 'terminal' ? null : first;
    if (first === 'terminal') {
      const fromLog = { reply: lastReply(await this.options.store.readStream(`run:${runId}`)) };
      view = await this.actor.read((state) => runView(state, runId, fromLog));
    }
    if (!view) return refused(404, 'unknown_run', `no run ${runId}`);
    const progress = this.progress.of(runId);
    return { status: 200, body: progress && !isTerminal(view.state) ? { ...view, progress: progress.text } : view };
  }

  /** `GET /v1/runs?prefix=P`: the ids of the runs that start with `prefix`, sorted, a few. */
  async runsStartingWith(prefix: string): Promise<Answer> {
    const runIds = await this.actor.read((state) => idsStartingWith(Object.keys(state.runs), prefix));
    return { status: 200, body: { run_ids: runIds } };
  }

  /** Counts for `/metrics`, read in one pass over the runs. */
  async counts(): Promise<{ runs: Record<string, number>; connected: number; open: number }> {
    return this.actor.read((state) => {
      const runs: Record<string, number> = {};
      for (const run of Object.values(state.runs)) runs[run.state] = (runs[run.state] ?? 0) + 1;
      return { runs, connected: state.connected.length, open: Object.keys(state.open).length };
    });
  }

  /** A request's input: a log that cannot take it fails the request at once (507), and its client retries. */
  private async decide(input: BoardInput): Promise<RequestAnswer> {
    const outcome = await this.actor.input(input, { failFast: true });
    if (!outcome.ok) throw outcome.conflict;
    const answer = requestAnswer(outcome.decisions);
    if (!answer) throw new Error(`the board decided nothing for ${input.type}`);
    return answer;
  }

  private afterCommit(state: BoardState, decisions: readonly DomainEvent[]): void {
    for (const decision of decisions) {
      this.push.send(framesOf(decision, state));
      if (decision.type === 'board.run.finished' || decision.type === 'board.run.resolved') this.progress.ended(decision.data.runId);
    }
  }
}

function lastReply(events: readonly DomainEvent[]): string | null {
  const replied = events.findLast((e) => e.type === 'board.run.replied');
  return replied?.type === 'board.run.replied' ? replied.data.text : null;
}
