import { randomUUID } from 'node:crypto';
import { Subject, type Subscription } from 'rxjs';
import { framesOf, type RequestAnswer, requestAnswer } from '../../actors/board/boardAnswers.ts';
import { BOARD_STREAM_KINDS, boardDecider } from '../../actors/board/boardDecider.ts';
import { boardInput } from '../../actors/board/boardInputs.ts';
import {
  cancelAnswer,
  claimedRunBody,
  heartbeatAnswer,
  idleNextTurns,
  openClaims,
  runView,
  settledView,
  tokenHashOf,
} from '../../actors/board/boardQueries.ts';
import { type BoardRun, type BoardState, connectedElsewhere, initialBoardState, isConnected, isTerminal } from '../../actors/board/boardState.ts';
import { copyBoardState } from '../../actors/board/copyBoardState.ts';
import type { BoardDecision, BoardInput } from '../../actors/board/decideBoard.ts';
import { pastOf, type RunPast, type SettledRun, settledRun } from '../../actors/board/settledRun.ts';
import { runDiffOf } from '../../adapters/http/runDiff.ts';
import { listRuns, type RunListPage, type RunListQuery, rowOf } from '../../adapters/http/runListing.ts';
import { RunProgress } from '../../adapters/http/runProgress.ts';
import { hashToken, runToken, sameSecret } from '../../adapters/http/tokens.ts';
import { PushHub } from '../../adapters/push/pushHub.ts';
import type { DomainEvent } from '../../events/catalog.ts';
import { codec } from '../../events/catalog.ts';
import { parseStream } from '../../events/envelope.ts';
import { messageOf } from '../../events/thrown.ts';
import type { Usage } from '../../events/usage.ts';
import type { ChangeSummary } from '../../events/workspace.ts';
import { idsStartingWith, LOOKUP_LIMIT } from '../../projections/audit/runIdPrefix.ts';
import { runRecordOf } from '../../projections/audit/runRecord.ts';
import { boardProjection } from '../../projections/board.ts';
import type { Clock } from '../../runtime/actors/clock.ts';
import { DecidingActor } from '../../runtime/actors/decidingActor.ts';
import type { ActorSystem } from '../../runtime/actors/runtime.ts';
import { type FailureLog, stderrLog } from '../../runtime/actors/untilRecorded.ts';
import { entityTimeline } from '../../runtime/audit/runTimeline.ts';
import { foldLog } from '../../runtime/folds/foldLog.ts';
import { hydrateStates } from '../../runtime/folds/hydrate.ts';
import { type ComputerEvents, type EntityReads, type ReportedRow, withComputerEvents } from '../../runtime/store/computerEvents.ts';
import type { EventStore, OpenedLog } from '../../runtime/store/eventStore.ts';
import { LeaseMonitor } from './leaseMonitor.ts';
import { OfferMonitor } from './offerMonitor.ts';
import { type BoardPeers, SoleBoard } from './peers/boardPeers.ts';
import { SubmitTokens } from './submitTokens.ts';

export interface Answer {
  readonly status: number;
  readonly body: unknown;
}

export interface BoardHostOptions {
  readonly system: ActorSystem;
  readonly store: OpenedLog;
  readonly clock: Clock;
  readonly boardSecret: string;
  /** The token file's (a SQLite board); null on PostgreSQL, whose submit tokens are all `runledger token add`'s. */
  readonly submitToken: string | null;
  readonly leaseMs?: number;
  /** A connection refused because its computer is connected elsewhere: recorded at the edge. */
  readonly refusedStream?: (computerId: string, incarnation: string | null) => void;
  /** The daemon's log (stderr when not given): what failed outside a request, and went on. */
  readonly log?: FailureLog;
  /** The other boards of its log (PostgreSQL, docs/rules.md#postgresql-board): who does the chores, heartbeats heard by any. Alone by default. */
  readonly peers?: BoardPeers;
  /** Where the events computers report are kept, apart from the log (none: reports are refused 501). */
  readonly reported?: ComputerEvents;
}

const refused = (status: number, code: string, message = code): Answer => ({ status, body: { detail: { error: code, message } } });

/** Who a run's token speaks for: the computer and the life its claim was granted to, and whether the token is bound to that life. */
interface RunHolder {
  readonly computerId: string;
  readonly incarnation: string | null;
  readonly bound: boolean;
}

function holderOf(run: BoardRun | undefined): RunHolder | null {
  if (run?.computerId == null) return null;
  return { computerId: run.computerId, incarnation: run.incarnation, bound: run.bound === true };
}

/** A run's holder from its own stream (the board's events, not a computer's copy): its last claim granted. */
function claimOf(events: readonly DomainEvent[]): RunHolder | null {
  let holder: RunHolder | null = null;
  for (const event of events) {
    if (event.type !== 'board.run.claimed' || event.stream.indexOf('/') !== -1) continue;
    holder = { computerId: event.data.computerId, incarnation: event.data.incarnation ?? null, bound: event.data.bound === true };
  }
  return holder;
}

/**
 * The board as a service: each request becomes an input of the board actor, and its answer is read
 * from the decisions taken (docs/rules.md#wire-and-cli). Frames follow the commit; heartbeats touch the lease in
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
  private readonly peers: BoardPeers;
  /** Inputs that are chores (a lapse, a stale offer, an orphan's disconnect): appended only under the chores' lease. */
  private readonly chores = new WeakSet<BoardInput>();
  /** A run's events as its readers explain it: the board's log and what its computers reported. */
  readonly entities: EntityReads;
  /** The events each report kept, as they are kept: for the folds of each remote computer's queue and sessions. */
  readonly reports = new Subject<void>();

  constructor(private readonly options: BoardHostOptions) {
    const { system, store, clock } = options;
    const peers = options.peers ?? new SoleBoard();
    this.peers = peers;
    this.entities = withComputerEvents(store, options.reported ?? null);
    this.submitTokens = new SubmitTokens(store, options.submitToken);
    this.actor = new DecidingActor(system, store, {
      name: 'board',
      decider: boardDecider,
      clock,
      hydrate: async (until) => (await hydrateStates(store, [boardProjection], until))[0],
      // Its state is shared by all its streams (lanes, the submission order): with several boards on one
      // log (docs/rules.md#postgresql-board), a decision taken before another board's was seen is refused and taken again, on
      // the state caught up with what was appended since (the fold of the log's tail).
      guardKinds: BOARD_STREAM_KINDS,
      tailFold: { fold: boardProjection.evolve, readAfter: (after, visit) => foldLog(store, after, visit), copy: copyBoardState },
      afterCommit: (state, decisions) => this.afterCommit(state, decisions),
      leaseFor: (input) => (this.chores.has(input) ? peers.choreLease() : null),
    });
    this.push = new PushHub(
      {
        // Each says which board holds (or held) the stream: a late close from a board the computer left ends nothing (docs/rules.md#postgresql-board).
        connected: async (computerId, incarnation, repos) => {
          const place = await this.placement(computerId, incarnation);
          if (place === 'refused') return false;
          // Said before it is recorded: the lease holder never takes a computer just connected here for an orphan.
          await peers.holding(this.push.computers());
          const life = { incarnation, ...(place.over === undefined ? {} : { over: place.over }) };
          const outcome = await this.actor.input(boardInput.connected(computerId, clock.now(), store.writer, life, repos));
          // Another board recorded its twin first (both looked while the log had it offline): refused here.
          return !(outcome.ok && outcome.decisions[0]?.type === 'board.request.refused');
        },
        disconnected: async (computerId, lastSeenAt) => {
          // Said at once, so another board takes the computer's next life without waiting for this one's next beat.
          await peers.holding(this.push.computers()).catch(() => undefined);
          await this.actor.input(boardInput.disconnected(computerId, clock.now(), lastSeenAt, store.writer));
        },
        declined: async (computerId, runId, reason) => void (await this.actor.input(boardInput.declined(runId, computerId, clock.now(), reason))),
        refused: (computerId, incarnation) => options.refusedStream?.(computerId, incarnation),
      },
      clock,
      options.log ?? stderrLog,
    );
    this.lease = new LeaseMonitor(
      clock,
      options.leaseMs ?? 90_000,
      peers,
      () => this.actor.read(openClaims),
      async (runId, last) => void (await this.actor.input(this.chore(boardInput.lapsed(runId, last, clock.now())))),
      options.log ?? stderrLog,
    );
    this.offers = new OfferMonitor(
      clock,
      // Only the chores' holder offers again (one board's waits, not one per board).
      () => (peers.holdsChores() ? this.actor.read(idleNextTurns) : Promise.resolve([])),
      async (runId, since) => void (await this.actor.input(this.chore(boardInput.stale(runId, since, clock.now())))),
      options.log ?? stderrLog,
    );
  }

  /**
   * Connections recorded by a board that stopped are stale: they are closed by the chores' holder (this
   * board alone at its start; on PostgreSQL a lease after that board's last word). Then the lease
   * monitor starts, and board events the actor did not append itself (another process, a one-shot
   * command) make it rehydrate.
   */
  async start(): Promise<void> {
    await this.peers.start({
      computers: () => this.push.computers(),
      round: () => this.closeOrphans(),
      streams: () => void this.connectHeldAgain(),
    });
    this.lease.start();
    this.offers.start();
    const head = await this.options.store.headSeq();
    await this.submitTokens.refresh();
    this.foreign = this.options.store.subscribe(head).subscribe((event) => {
      if (event.type === 'token.added' || event.type === 'token.revoked') void this.submitTokens.refresh();
      if (boardDecider.scopeOf(event) === null) return;
      this.actor.observe(event);
      // Another board's orphan round (or a one-shot command) took offline a computer whose stream this one holds.
      if (event.type === 'board.computer.offline') this.connectAgain(event.data.computerId);
      // Another board took a computer whose stream this one holds: the log says where it is connected.
      if (event.type === 'board.computer.online' && event.data.board !== undefined && event.data.board !== this.options.store.writer) {
        this.push.connectedElsewhere(event.data.computerId, event.data.incarnation ?? null);
      }
      // Another board on the same log (PostgreSQL, docs/rules.md#postgresql-board) decided it: its frames go down the streams this one holds.
      if (event.actor !== this.options.store.writer) void this.actor.read((state) => this.push.send(framesOf(event, state)));
    });
  }

  async stop(): Promise<void> {
    this.foreign?.unsubscribe();
    this.lease.stop();
    this.offers.stop();
    this.push.close();
    await this.peers.stop();
    this.actor.stop();
  }

  /**
   * Computers recorded connected whose stream no live board holds (their board stopped or died) are
   * recorded disconnected, so their claims are reaped and their runs offered to others. Each is checked
   * again on the log just before: one whose stream moved since the boards were read is left for the next round.
   */
  private async closeOrphans(): Promise<void> {
    const { store, clock } = this.options;
    const seen = await this.peers.orphans(await this.actor.read((state) => [...state.connected]));
    if (seen.length === 0) return;
    // Versions first, then the boards again: a computer that connected to a board since was said by it
    // before it was recorded, so it is either no orphan now or its stream has moved past the version read.
    const versions = new Map(await Promise.all(seen.map(async (c) => [c, await store.streamVersion(`computer:${c}`)] as const)));
    for (const computerId of await this.peers.orphans(seen)) {
      if ((await store.streamVersion(`computer:${computerId}`)) !== versions.get(computerId)) continue;
      await this.actor.input(this.chore(boardInput.disconnected(computerId, clock.now())));
    }
  }

  /**
   * The log is made to say again what this board's sockets say: a computer whose stream it holds, and
   * which the log has offline, is recorded connected again (its stream never closed, so the computer
   * will not connect again of its own, and no run would be offered to it).
   */
  private connectAgain(computerId: string): void {
    if (!this.push.holds(computerId)) return;
    this.push.connectAgain(computerId, () => this.actor.read((state) => !isConnected(state, computerId)));
  }

  /** Each stream this board holds whose computer the log has offline (one read of the state for all) is connected again. */
  private async connectHeldAgain(): Promise<void> {
    const held = this.push.computers();
    const lost = await this.actor
      .read((state) => held.filter((computerId) => !isConnected(state, computerId)))
      .catch((error: unknown) => {
        (this.options.log ?? stderrLog)(
          `board: the streams it holds could not be checked against the log (${messageOf(error)}); checked again next round`,
        );
        return [];
      });
    for (const computerId of lost) this.connectAgain(computerId);
  }

  /**
   * Whether `computerId`'s daemon life `incarnation` may open its stream here: `refused` when the log has
   * its stream on another board (by another life, or one that named none) and a live board other than this
   * one still holds it; else `over` names the board the log had it on whose hold lapsed (it died, or
   * dropped the stream), for the decision to take the connection from it. One push stream per computer
   * holds across the boards of a log this way, and a dead board blocks nobody beyond its lease.
   */
  async placement(computerId: string, incarnation: string | null): Promise<'refused' | { over?: string }> {
    const me = this.options.store.writer;
    const via = await this.actor.read((state) =>
      connectedElsewhere(state, computerId, me, incarnation, undefined) ? (state.computers[computerId]!.via ?? null) : null,
    );
    if (via === null) return {};
    return (await this.peers.heldElsewhere(computerId)) ? 'refused' : { over: via };
  }

  /** `input`, marked as a chore: its append carries the chores' lease (BoardPeers.choreLease). */
  private chore<T extends BoardInput>(input: T): T {
    this.chores.add(input);
    return input;
  }

  /** Whether `token` is a submit token this board knows now (the web view's check). */
  isSubmitToken(token: string | null): boolean {
    return this.submitTokens.knows(token);
  }

  /** Whether `token` is a submit token, one recorded a moment ago by another process included (the API's check). */
  acceptsSubmitToken(token: string | null): Promise<boolean> {
    return this.submitTokens.accepts(token);
  }

  /**
   * The computer a token belongs to, checked against the stored hash. A computer registered a moment ago
   * by another process (`runledger computer add` beside a running board, then the computer started at
   * once) is in the log before this board's follow of it has told its actor: its own stream is read
   * before the token is refused, and the actor catches up when it holds the token.
   */
  async isComputerToken(computerId: string, token: string | null): Promise<boolean> {
    if (token === null) return false;
    const hash = hashToken(token);
    const known = async () => {
      const stored = await this.actor.read((state) => tokenHashOf(state, computerId));
      return stored !== null && sameSecret(hash, stored);
    };
    if (await known()) return true;
    const registered = (await this.options.store.readStream(`computer:${computerId}`)).some(
      (event) => event.type === 'board.computer.registered' && sameSecret(hash, event.data.tokenHash),
    );
    if (!registered) return false;
    await this.actor.rehydrate();
    return known();
  }

  async submit(
    body: { lane: string; prompt: string; agent_id?: string | null; timeout_s?: number | null; repo?: string | null; base?: string | null },
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
        ...(body.repo ? { repo: body.repo } : {}),
        ...(body.base ? { base: body.base } : {}),
      },
      this.options.clock.now(),
    );
    const answer = await this.decide(input);
    return 'code' in answer ? refused(answer.status, answer.code, answer.reason) : { status: 201, body: { run_id: answer.runId } };
  }

  /** `incarnation`: the claiming daemon's life, from `Runledger-Incarnation` (absent from older computers). */
  async claim(computerId: string, runId: string, incarnation?: string): Promise<Answer> {
    const answer = await this.decideAbout(runId, (past) => boardInput.claim(runId, computerId, this.options.clock.now(), incarnation, past));
    if ('code' in answer) return refused(answer.status, answer.code, answer.reason);
    this.lease.touch(runId);
    const [run, holder] = await this.actor.read((state) => [claimedRunBody(state, runId), holderOf(state.runs[runId])] as const);
    // Granted, the run is held by this computer and this life (`holder` is null only if it settled meanwhile).
    const token = this.tokenOf(runId, holder ?? { computerId, incarnation: incarnation ?? null, bound: true });
    return { status: 200, body: { run, run_token: token, skills: [] } };
  }

  /** The computer a run token speaks for: the run's holder, if the token is the one its claim got. */
  async runTokenHolder(runId: string, token: string | null): Promise<string | null> {
    if (token === null) return null;
    const live = await this.actor.read((state) => (state.runs[runId] ? holderOf(state.runs[runId]) : undefined));
    // A settled run's holder (a completion sent again gets its 409) is in its stream.
    const holder = live === undefined ? claimOf(await this.options.store.readStream(`run:${runId}`)) : live;
    if (holder === null) return null;
    return sameSecret(token, this.tokenOf(runId, holder)) ? holder.computerId : null;
  }

  /** The token a run's claim got: bound to the claiming life, or (claims decided before tokens were bound) the computer's. */
  private tokenOf(runId: string, holder: RunHolder): string {
    const life = holder.bound ? { incarnation: holder.incarnation } : undefined;
    return runToken(this.options.boardSecret, runId, holder.computerId, life);
  }

  /**
   * Heartbeats are answered from the state and not recorded, except the first, which marks it running;
   * their `progress` is kept in memory (RunProgress), never in the log.
   */
  async heartbeat(runId: string, computerId: string, progress?: string): Promise<Answer> {
    let answer = await this.actor.read((state) => heartbeatAnswer(state, runId, computerId));
    if (answer.status === 404) answer = heartbeatAnswer(initialBoardState(), runId, computerId, pastOf(await this.settledRun(runId)) ?? undefined);
    if (answer.status !== 200) return refused(answer.status, answer.code);
    this.lease.touch(runId);
    if (progress !== undefined) this.progress.heard(runId, progress, this.options.clock.now());
    if (answer.markRunning) await this.actor.input(boardInput.started(runId, computerId, this.options.clock.now()), { failFast: true });
    return { status: 200, body: { cancel_requested: answer.cancelRequested } };
  }

  async reply(runId: string, computerId: string, text: string): Promise<Answer> {
    const answer = await this.decideAbout(runId, (past) => boardInput.reply(runId, computerId, text, this.options.clock.now(), past));
    return 'code' in answer ? refused(answer.status, answer.code, answer.reason) : { status: 200, body: { ok: true } };
  }

  async complete(runId: string, computerId: string, ok: boolean, error?: string, usage?: Usage, changes?: ChangeSummary): Promise<Answer> {
    const answer = await this.decideAbout(runId, (past) =>
      boardInput.completion(runId, computerId, ok, error, this.options.clock.now(), usage, past, changes),
    );
    return 'code' in answer ? refused(answer.status, answer.code, answer.reason) : { status: 200, body: { ok: true } };
  }

  async cancel(runId: string): Promise<Answer> {
    const answer = await this.decideAbout(runId, (past) => boardInput.cancel(runId, this.options.clock.now(), past));
    if ('code' in answer) return refused(answer.status, answer.code, answer.reason);
    // What was decided, in words the CLI prints: `stopping on c1`, `withdrawn before it was claimed`.
    let body = await this.actor.read((state) => cancelAnswer(state, runId));
    // Withdrawn before its claim, the run settled at once and left the state: its end is in its stream.
    if (!body) body = cancelAnswer(initialBoardState(), runId, await this.settledRun(runId));
    return { status: 202, body: body ?? { run_id: runId } };
  }

  async run(runId: string): Promise<Answer> {
    // A settled run left the state: it is read from its stream (settled is for good).
    const live = await this.actor.read((state) => runView(state, runId));
    const settled = live ? null : await this.settledRun(runId);
    const view = live ?? (settled ? settledView(settled) : null);
    if (!view) return refused(404, 'unknown_run', `no run ${runId}`);
    const progress = this.progress.of(runId);
    return { status: 200, body: progress && !isTerminal(view.state) ? { ...view, progress: progress.text } : view };
  }

  /** `GET /v1/runs?prefix=P`: the ids of the runs that start with `prefix`, sorted, a few (settled ones from the log's index). */
  async runsStartingWith(prefix: string): Promise<Answer> {
    const live = await this.actor.read((state) => idsStartingWith(Object.keys(state.runs), prefix));
    const logged = await this.entities.entityIdsStartingWith('run', prefix, LOOKUP_LIMIT);
    const runIds = [...new Set([...live, ...logged])].sort().slice(0, LOOKUP_LIMIT);
    return { status: 200, body: { run_ids: runIds } };
  }

  /** `GET /v1/runs?lane=&state=&computer=&limit=&before=&texts=`: a page of the runs, live and finished, newest first. */
  async runs(query: RunListQuery): Promise<Answer> {
    return { status: 200, body: await this.listRuns(query) };
  }

  /** A page of the runs (see `runs`), for the web view's lane page as for the API. */
  listRuns(query: RunListQuery): Promise<RunListPage> {
    const sources = {
      board: <T>(read: (state: BoardState) => T) => this.actor.read(read),
      store: { ...pick(this.options.store), readEntity: (entity: string) => this.entities.readEntity(entity) },
      progress: (runId: string) => this.progress.of(runId)?.text ?? null,
    };
    return listRuns(sources, query);
  }

  /** `GET /v1/runs/{run_id}/details`: the run as a person reads it (its prompt, times, cost, texts whole), from its own events. */
  async details(runId: string): Promise<Answer> {
    const record = runRecordOf(runId, await this.entities.readEntity(`run:${runId}`));
    if (record.state === null) return refused(404, 'unknown_run', `no run ${runId}`);
    return { status: 200, body: rowOf(record, 'whole', this.progress.of(runId)?.text ?? null) };
  }

  /** `GET /v1/runs/{run_id}/audit`: its timeline as `runledger audit` prints it, its computer's reported events included. */
  async timeline(runId: string): Promise<Answer> {
    const timeline = await entityTimeline(this.entities, 'run', runId);
    return timeline ? { status: 200, body: { ...timeline } } : refused(404, 'unknown_run', `no run ${runId}`);
  }

  /** `GET /v1/runs/{run_id}/diff`: the diff its turn left in its worktree, when this board holds its computer's events. */
  async diff(runId: string): Promise<Answer> {
    const answer = runDiffOf(runRecordOf(runId, await this.entities.readEntity(`run:${runId}`)));
    return answer.status === 200 ? answer : refused(answer.status, answer.code, answer.reason);
  }

  /**
   * `POST /v1/computers/{id}/events`: a computer's report of its own runs', lanes' and sessions' events,
   * kept apart from the log (nothing is decided from them). Only the computer's own streams are kept,
   * and only events this version reads (a newer computer's are passed over): a bad row is never a
   * reason to refuse the batch, which would hold the computer's cursor on it for ever. Answers how far
   * the board has this computer's events.
   */
  async report(computerId: string, rows: readonly ReportedRow[]): Promise<Answer> {
    const reported = this.options.reported;
    if (!reported) return refused(501, 'reports_not_kept', "this board keeps no copy of its computers' events");
    const kept = rows.filter((row) => parseStream(row.stream).owner === computerId && codec.tryDecodeData(row.type, row.data).ok);
    const through = await reported.record(computerId, kept);
    // Rows passed over still count as heard: the computer's cursor moves past them.
    const last = Math.max(through, ...rows.map((row) => row.seq));
    if (kept.length > 0) this.reports.next();
    return { status: 200, body: { through: last, kept: kept.length } };
  }

  /** Counts for `/metrics`: the live runs in one pass, the settled ones as the state counted them. */
  async counts(): Promise<{ runs: Record<string, number>; connected: number; open: number }> {
    return this.actor.read((state) => {
      const runs: Record<string, number> = { ...state.settled };
      for (const run of Object.values(state.runs)) runs[run.state] = (runs[run.state] ?? 0) + 1;
      return { runs, connected: state.connected.length, open: Object.keys(state.open).length };
    });
  }

  /** A settled run's end, from its stream (indexed): what the state no longer holds of it. */
  private async settledRun(runId: string): Promise<SettledRun | null> {
    return settledRun(await this.options.store.readStream(`run:${runId}`));
  }

  /**
   * A request about one run, recorded with what the host read of it first (see RunPastSchema): `live`
   * when the state holds it, else its end from its stream. A run that settled between the look and the
   * decision makes the board ignore the input (`raced`): looked at again, it is then read from the log.
   */
  private async decideAbout(runId: string, make: (past: RunPast) => BoardInput): Promise<RequestAnswer> {
    for (;;) {
      const live = await this.actor.read((state) => state.runs[runId] !== undefined);
      const past: RunPast = live ? 'live' : pastOf(await this.settledRun(runId));
      const outcome = await this.actor.input(make(past), { failFast: true });
      if (!outcome.ok) throw outcome.conflict;
      // A claim that lost: answered, not recorded (docs/rules.md#dispatch).
      if (outcome.input === null && outcome.unrecorded) return requestAnswer(outcome.unrecorded)!;
      if (outcome.input === null && live) continue;
      const answer = requestAnswer(outcome.decisions);
      if (!answer) throw new Error(`the board decided nothing for a request about run ${runId}`);
      return answer;
    }
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
      // Its connection recorded here, the computer's socket takes frames: the runs pushed to it on connect first.
      if (decision.type === 'board.computer.online' && decision.data.board === this.options.store.writer) this.push.admit(decision.data.computerId);
      this.push.send(framesOf(decision, state));
      if (decision.type === 'board.run.finished' || decision.type === 'board.run.resolved') this.progress.ended(decision.data.runId);
    }
  }
}

/** A store's reads a run listing makes, bound to it. */
function pick(store: EventStore): Pick<EventStore, 'headSeq' | 'readAll'> {
  return { headSeq: () => store.headSeq(), readAll: (after, limit) => store.readAll(after, limit) };
}
