import { framesOf, requestAnswer } from '../../actors/board/boardAnswers.ts';
import { cancelRequested, openClaims, runView, settledView } from '../../actors/board/boardQueries.ts';
import type { BoardState, RunState } from '../../actors/board/boardState.ts';
import type { BoardDecision, BoardInput } from '../../actors/board/decideBoard.ts';
import type { SettledRun } from '../../actors/board/settledRun.ts';

interface ModelRun {
  readonly runId: string;
  readonly lane: string;
  state: RunState;
  holder: string | null;
  claims: number;
  cancelPending: boolean;
  offeredTo: Set<string>;
  /** The life of the holder's daemon the claim went to. */
  incarnation: string | null;
}

const REQUESTS = new Set([
  'board.run.submitted',
  'board.computer.added',
  'board.computer.connected',
  'board.claim.requested',
  'board.cancel.requested',
  'board.reply.received',
  'board.completion.received',
]);
const TERMINAL = new Set<RunState>(['succeeded', 'failed', 'cancelled', 'resolved']);

/**
 * docs/rules.md#wire-and-cli's rules as a model kept from the decisions alone, checked against every decision as
 * it is taken and against the board's own state after every step. It is the rule, not the code:
 * it knows nothing of the board's indexes.
 */
export class BoardModel {
  /** `settled`: a run's end as its stream tells it, for the runs that left the board's state. */
  constructor(private readonly settled: (runId: string) => SettledRun | null = () => null) {}

  private readonly runs = new Map<string, ModelRun>();
  private readonly connected = new Set<string>();
  private readonly draining = new Set<string>();
  /** The input decided now is one of one offer at a time: a run is offered to one computer. */
  private oneOffer = false;
  /** Per lane, the computer that claimed its last turn. */
  private readonly lastComputer = new Map<string, string>();

  observe(input: BoardInput, decisions: readonly BoardDecision[] | null, state: BoardState): void {
    if (decisions !== null && REQUESTS.has(input.type) && requestAnswer(decisions) === null) fail(`request ${input.type} got no answer`);
    if (input.type === 'board.claim.requested' && decisions?.[0]?.type === 'board.request.repeated') {
      const run = this.runs.get(input.data.runId)!;
      const asked = input.data.incarnation ?? null;
      if (run.incarnation !== null && asked !== null && asked !== run.incarnation) {
        fail(`run ${run.runId} held by incarnation ${run.incarnation} of ${run.holder} was granted again to its incarnation ${asked}`);
      }
    }
    this.oneOffer = (input.data as { oneOffer?: true }).oneOffer === true;
    for (const decision of decisions ?? []) this.decided(decision, state);
    this.compare(state);
  }

  get size(): number {
    return this.runs.size;
  }

  claimsGranted(): number {
    return [...this.runs.values()].reduce((n, r) => n + r.claims, 0);
  }

  private decided(d: BoardDecision, state: BoardState): void {
    switch (d.type) {
      case 'board.computer.online': {
        // Older rule: it is pushed every unclaimed run, but those of lanes whose last turn ran on another
        // connected computer that takes work: they count as offered to it. One offer at a time: some of
        // those (what its frames say), never one of a lane that stays elsewhere.
        const c = d.data.computerId;
        const framed = d.data.oneOffer
          ? new Set(framesOf({ ...d, seq: 0 }, state).flatMap(({ frame }) => (frame.kind === 'run.requested' ? [frame.data.run_id] : [])))
          : null;
        for (const run of this.runs.values()) {
          const last = this.lastComputer.get(run.lane);
          const staysElsewhere = last !== undefined && last !== c && this.connected.has(last) && !this.draining.has(last);
          if (framed?.has(run.runId) && (run.state !== 'queued' || staysElsewhere))
            fail(`${c} was pushed run ${run.runId}, which is not its to take`);
          if (run.state === 'queued' && !staysElsewhere && (framed === null || framed.has(run.runId))) run.offeredTo.add(c);
        }
        this.connected.add(c);
        this.draining.delete(c);
        return;
      }
      case 'board.computer.offline':
        this.connected.delete(d.data.computerId);
        this.draining.delete(d.data.computerId);
        return;
      case 'board.computer.draining':
        if (!this.connected.has(d.data.computerId)) fail(`${d.data.computerId} marked draining while not connected`);
        this.draining.add(d.data.computerId);
        return;
      case 'board.computer.registered':
      case 'board.request.refused':
      case 'board.request.repeated':
      case 'board.run.deduplicated':
        return;
      case 'board.run.queued':
        if (this.runs.has(d.data.runId)) fail(`run ${d.data.runId} queued twice`);
        this.runs.set(d.data.runId, {
          runId: d.data.runId,
          lane: d.data.lane,
          state: 'queued',
          holder: null,
          claims: 0,
          cancelPending: false,
          offeredTo: new Set(),
          incarnation: null,
        });
        return;
      default:
        break;
    }
    const { runId } = d.data;
    const run = this.runs.get(runId);
    if (!run) fail(`${d.type} about run ${runId}, which was never queued`);
    if (TERMINAL.has(run.state)) fail(`${d.type} about run ${runId} after it became ${run.state}: a terminal state is final`);
    const expect = (...from: RunState[]) => {
      if (!from.includes(run.state)) fail(`${d.type} of run ${runId} while it is ${run.state}`);
    };
    switch (d.type) {
      case 'board.run.offered':
        expect('queued');
        if (this.oneOffer && d.data.computers.length !== 1) fail(`run ${runId} offered to ${d.data.computers.join(', ')} at once`);
        for (const c of d.data.computers) {
          if (!this.connected.has(c)) fail(`run ${runId} offered to ${c}, which is not connected`);
          if (this.draining.has(c)) fail(`run ${runId} offered to ${c}, which drains`);
          run.offeredTo.add(c);
        }
        break;
      case 'board.run.claimed': {
        expect('queued');
        run.claims++;
        if (run.claims > 1) fail(`run ${runId} claimed twice`);
        const open = [...this.runs.values()].find((r) => r.lane === run.lane && r.holder !== null && !TERMINAL.has(r.state));
        if (open) fail(`run ${runId} claimed while ${open.runId} of lane ${run.lane} is ${open.state}: two open turns in one lane`);
        run.state = 'claimed';
        run.holder = d.data.computerId;
        run.incarnation = d.data.incarnation ?? null;
        this.lastComputer.set(run.lane, d.data.computerId);
        break;
      }
      case 'board.run.running':
        expect('claimed');
        run.state = 'running';
        break;
      case 'board.run.replied':
        expect('claimed', 'running');
        if (d.data.computerId !== run.holder) fail(`reply to ${runId} from ${d.data.computerId}, held by ${run.holder}`);
        run.state = 'running';
        break;
      case 'board.run.cancel.requested':
        expect('claimed', 'running');
        if (run.cancelPending) fail(`cancel of ${runId} requested twice`);
        run.cancelPending = true;
        break;
      case 'board.run.cancelled': {
        expect('queued');
        const told = [...run.offeredTo].sort();
        if (JSON.stringify(told) !== JSON.stringify(d.data.offeredTo)) fail(`cancel of ${runId} told ${d.data.offeredTo}, offered to ${told}`);
        run.state = 'cancelled';
        break;
      }
      case 'board.run.finished':
        expect('claimed', 'running');
        if (d.data.computerId !== run.holder) fail(`completion of ${runId} from ${d.data.computerId}, held by ${run.holder}`);
        run.state = d.data.state;
        break;
      case 'board.run.resolved':
        expect('claimed', 'running');
        run.state = 'resolved';
        break;
      default:
        // The decider's type admits no other decision; this says so should one come anyway.
        fail(`unexpected decision ${JSON.stringify(d)}`);
    }
  }

  private compare(state: BoardState): void {
    const open: string[] = [];
    for (const run of this.runs.values()) {
      // The state holds what is live (issue 16): a settled run has left it, and its stream tells its end.
      if (TERMINAL.has(run.state) === (state.runs[run.runId] !== undefined))
        fail(`run ${run.runId} is ${run.state} by its decisions, ${state.runs[run.runId] ? 'in' : 'not in'} the board's state`);
      const settled = this.settled(run.runId);
      const view = runView(state, run.runId) ?? (settled ? settledView(settled) : null);
      if (view?.state !== run.state) fail(`run ${run.runId} reads ${view?.state} on the board, ${run.state} by its decisions`);
      if ((view.computer_id ?? null) !== run.holder)
        fail(`run ${run.runId} held by ${view.computer_id} on the board, ${run.holder} by its decisions`);
      const pending = run.cancelPending && !TERMINAL.has(run.state);
      if (cancelRequested(state, run.runId) !== pending) fail(`run ${run.runId}: cancelRequested disagrees (${pending} by its decisions)`);
      if (run.holder !== null && !TERMINAL.has(run.state)) open.push(run.runId);
    }
    const listed = openClaims(state)
      .map((c) => c.runId)
      .sort();
    if (JSON.stringify(listed) !== JSON.stringify(open.sort())) fail(`openClaims lists ${listed}, the decisions say ${open}`);
    const lanes = new Map<string, string>();
    for (const runId of open) {
      const lane = this.runs.get(runId)!.lane;
      if (lanes.has(lane)) fail(`lane ${lane} has two open turns: ${lanes.get(lane)} and ${runId}`);
      lanes.set(lane, runId);
    }
    if (JSON.stringify([...this.connected].sort()) !== JSON.stringify(state.connected))
      fail(`connected ${state.connected}, the decisions say ${[...this.connected]}`);
    if (JSON.stringify([...this.draining].sort()) !== JSON.stringify(Object.keys(state.draining).sort()))
      fail(`draining ${Object.keys(state.draining)}, the decisions say ${[...this.draining]}`);
    for (const run of this.runs.values()) {
      const offered = [...run.offeredTo].sort();
      if (run.state === 'queued' && JSON.stringify(offered) !== JSON.stringify(state.runs[run.runId]!.offeredTo)) {
        fail(`run ${run.runId} offered to ${state.runs[run.runId]!.offeredTo} on the board, to ${offered} by its decisions`);
      }
    }
  }
}

function fail(message: string): never {
  throw new Error(message);
}
