import type { QueueDecision, QueueInput } from '../../actors/lane/decideQueue.ts';
import { isParked, loginOf, type QueueState } from '../../actors/lane/queueState.ts';

type ModelStatus = 'waiting' | 'claiming' | 'running' | 'done';

interface ModelRun {
  readonly runId: string;
  readonly lane: string;
  readonly login: string;
  readonly arrival: number;
  status: ModelStatus;
  /** The board resent its frame (to this computer) while its claim was in flight. */
  resent: boolean;
  busyWaits: number;
  notBefore: number;
  readonly terminal: string[];
  /** Skipped for a passing reason (`retry`): out of the ledger, so a later frame queues it again. */
  skippedForNow?: boolean;
}

const TERMINAL = new Set(['run.ended', 'run.skipped', 'run.withdrawn']);

/**
 * docs/rules.md#computer-behaviour's rules as a model kept from the decisions alone, checked against every decision as it
 * is taken and against the decider's own state after every step. It knows nothing of the ready heap:
 * it is the rule, not the implementation.
 */
export class QueueModel {
  private readonly runs = new Map<string, ModelRun>();
  private held = false;

  constructor(
    private readonly slots: number,
    private readonly loginCapacity: Readonly<Record<string, number>>,
    /** This computer's id: a frame addressed to another one is ignored. */
    private readonly computer: string,
  ) {}

  /** Checks one step: `decisions` is null when the decider ignored `input`. Throws on a broken rule. */
  observe(input: QueueInput, decisions: readonly QueueDecision[] | null, state: QueueState): void {
    if (decisions !== null && input.type === 'scheduler.held') this.held = input.data.held;
    if (decisions !== null && input.type === 'frame.received' && input.data.kind === 'run.requested') {
      const run = this.runs.get(input.data.runId);
      const forUs = input.data.computerId === undefined || input.data.computerId === this.computer;
      if (run?.status === 'claiming' && forUs) run.resent = true;
    }
    // A timer that fired ends its run's wait: the run is due from then on, whatever `at` comes next
    // (a message carries its decision's, maybe earlier), so checkNoIdleSlot judges it from here.
    if (decisions !== null && input.type === 'timer.fired') {
      const run = this.runs.get(input.data.runId);
      if (run?.status === 'waiting' && run.notBefore <= input.at) run.notBefore = 0;
    }
    for (const decision of decisions ?? []) this.decided(decision);
    this.compare(state, input.at);
    this.checkNoIdleSlot(input.at);
  }

  /** Every run queued here ended in exactly one terminal decision. */
  checkAllSettled(state: QueueState): void {
    for (const run of this.runs.values()) {
      if (run.terminal.length !== 1) fail(`run ${run.runId} has terminal decisions [${run.terminal.join(', ')}], not exactly one`);
    }
    if (Object.keys(state.runs).length) fail(`runs left in the queue: ${Object.keys(state.runs).join(', ')}`);
    if (state.inUse !== 0 || Object.keys(state.loginsInUse).length) fail(`slots still in use once every run settled: ${state.inUse}`);
  }

  get queued(): number {
    return this.runs.size;
  }

  private decided(d: QueueDecision): void {
    if (d.type === 'frame.acknowledged') return;
    const runId = (d.data as { runId?: string }).runId;
    if (runId === undefined) fail(`decision ${d.type} names no run`);
    if (d.type === 'run.queued') {
      const earlier = this.runs.get(runId);
      if (earlier && !earlier.skippedForNow) fail(`run ${runId} queued twice`);
      const { lane, agentId, arrival } = d.data;
      this.runs.set(runId, {
        runId,
        lane,
        login: loginOf({ agentId }),
        arrival,
        status: 'waiting',
        resent: false,
        busyWaits: 0,
        notBefore: 0,
        terminal: [],
      });
      return;
    }
    const run = this.runs.get(runId);
    if (!run) fail(`decision ${d.type} about run ${runId}, which was never queued`);
    if (run.status === 'done') fail(`decision ${d.type} about run ${runId} after its terminal ${run.terminal.join(', ')}`);
    const expect = (...from: ModelStatus[]) => {
      if (!from.includes(run.status)) fail(`${d.type} of run ${runId} while it is ${run.status}`);
    };
    switch (d.type) {
      case 'run.claim.started':
        expect('waiting');
        this.checkMayStart(run, d.at);
        run.status = 'claiming';
        run.resent = false;
        break;
      case 'run.claimed':
        expect('claiming');
        run.status = 'running';
        break;
      case 'run.parked':
        expect('claiming');
        // A busy answer to a claim whose frame came again meanwhile is stale: requeued, not parked.
        if (run.resent) fail(`run ${runId} parked, though the board resent its frame while the claim was in flight`);
        if (d.data.notBefore <= d.at) fail(`run ${runId} parked until ${d.data.notBefore}, not after ${d.at}`);
        run.status = 'waiting';
        run.busyWaits = d.data.busyWaits;
        run.notBefore = d.data.notBefore;
        break;
      case 'run.claim.retrying':
        expect('claiming');
        run.status = 'waiting';
        run.notBefore = d.data.notBefore;
        break;
      case 'run.requeued':
        expect('claiming', 'running');
        if (run.status === 'claiming' && !run.resent) fail(`run ${runId} requeued at once after a busy answer, though no resend made it stale`);
        run.status = 'waiting';
        run.notBefore = 0;
        break;
      case 'run.unparked':
        expect('waiting');
        run.notBefore = 0;
        break;
      case 'run.withdrawn':
        expect('waiting');
        break;
      case 'run.skipped':
        expect('claiming');
        run.skippedForNow = d.data.retry === true;
        break;
      case 'run.ended':
        expect('running');
        break;
      default:
        // The decider's type admits no other decision; this says so should one come anyway.
        fail(`unexpected decision ${JSON.stringify(d)}`);
    }
    if (TERMINAL.has(d.type)) {
      run.status = 'done';
      run.terminal.push(d.type);
    }
  }

  /** A run starts only as its lane's oldest unparked run, in a free slot, with room in its login. */
  private checkMayStart(run: ModelRun, at: number): void {
    if (this.held) fail(`run ${run.runId} started while the scheduler is held`);
    if (run.busyWaits > 0 && run.notBefore > at) fail(`run ${run.runId} started while parked until ${run.notBefore} (at ${at})`);
    if (run.notBefore > at) fail(`run ${run.runId} started before its retry is due (${run.notBefore} > ${at})`);
    const active = [...this.runs.values()].filter((r) => r.status === 'claiming' || r.status === 'running');
    const sameLane = active.find((r) => r.lane === run.lane);
    if (sameLane) fail(`run ${run.runId} started while ${sameLane.runId} of lane ${run.lane} is ${sameLane.status}`);
    if (active.length >= this.slots) fail(`run ${run.runId} started with all ${this.slots} slots taken`);
    const capacity = this.loginCapacity[run.login];
    const logins = active.filter((r) => r.login === run.login).length;
    if (capacity !== undefined && logins >= capacity) fail(`run ${run.runId} started with login ${run.login} full (${logins}/${capacity})`);
    const older = [...this.runs.values()].find(
      (r) => r.lane === run.lane && r.status === 'waiting' && r.arrival < run.arrival && !(r.busyWaits > 0 && r.notBefore > at),
    );
    if (older) fail(`run ${run.runId} started ahead of ${older.runId}, an older unparked run of lane ${run.lane}`);
  }

  /**
   * Work goes on while it can: with a slot free, no lane's candidate that is due regardless of time
   * (`notBefore` 0: new, requeued or unparked) and whose login has room may be left waiting. A run
   * whose wait elapsed is due only once its timer fires, so those are not judged here.
   */
  private checkNoIdleSlot(at: number): void {
    if (this.held) return;
    const live = [...this.runs.values()].filter((r) => r.status !== 'done').sort((a, b) => a.arrival - b.arrival);
    const active = live.filter((r) => r.status === 'claiming' || r.status === 'running');
    if (active.length >= this.slots) return;
    const lanes = new Set(live.map((r) => r.lane));
    for (const lane of lanes) {
      if (active.some((r) => r.lane === lane)) continue;
      const candidate = live.find((r) => r.lane === lane && !(r.busyWaits > 0 && r.notBefore > at));
      if (candidate?.notBefore !== 0) continue;
      const capacity = this.loginCapacity[candidate.login];
      if (capacity !== undefined && active.filter((r) => r.login === candidate.login).length >= capacity) continue;
      fail(`run ${candidate.runId} of lane ${lane} waits with a slot free (${active.length}/${this.slots} in use)`);
    }
  }

  /** The decider's state agrees with the model, and with itself. */
  private compare(state: QueueState, at: number): void {
    const activeByLane = new Map<string, string>();
    const logins: Record<string, number> = {};
    let inUse = 0;
    for (const run of this.runs.values()) {
      const held = state.runs[run.runId];
      if (run.status === 'done') {
        if (held) fail(`run ${run.runId} settled yet still in the queue as ${held.status}`);
        continue;
      }
      if (!held) fail(`run ${run.runId} is ${run.status} but missing from the queue`);
      if (held.status !== run.status) fail(`run ${run.runId} is ${held.status} in the queue, ${run.status} by its decisions`);
      if (held.busyWaits !== run.busyWaits || held.notBefore !== run.notBefore) {
        fail(`run ${run.runId} waits ${held.busyWaits}/${held.notBefore} in the queue, ${run.busyWaits}/${run.notBefore} by its decisions`);
      }
      const lane = state.lanes[run.lane];
      if (!lane) fail(`lane ${run.lane} of run ${run.runId} is missing`);
      if (run.status === 'waiting') {
        if (!lane.waiting.includes(run.runId)) fail(`waiting run ${run.runId} is not in its lane's waiting list`);
        if (lane.active === run.runId) fail(`waiting run ${run.runId} is its lane's active run`);
        continue;
      }
      if (isParked(held, at)) fail(`parked run ${run.runId} is ${run.status}`);
      const other = activeByLane.get(run.lane);
      if (other) fail(`runs ${other} and ${run.runId} of lane ${run.lane} are both claiming or running`);
      activeByLane.set(run.lane, run.runId);
      if (lane.active !== run.runId) fail(`run ${run.runId} is ${run.status} but lane ${run.lane}'s active run is ${lane.active}`);
      inUse++;
      logins[run.login] = (logins[run.login] ?? 0) + 1;
    }
    if (Object.keys(state.runs).length !== [...this.runs.values()].filter((r) => r.status !== 'done').length) {
      fail(
        `the queue holds runs no decision queued: ${Object.keys(state.runs)
          .filter((id) => !this.runs.has(id))
          .join(', ')}`,
      );
    }
    for (const [name, lane] of Object.entries(state.lanes)) {
      if (lane.active !== null && activeByLane.get(name) !== lane.active)
        fail(`lane ${name} names ${lane.active} active, which is not claiming or running`);
      const order = lane.waiting.map((id) => state.runs[id]!.arrival);
      if (order.some((a, i) => i > 0 && a <= order[i - 1]!)) fail(`lane ${name}'s waiting runs are out of arrival order`);
    }
    if (state.inUse !== inUse) fail(`inUse is ${state.inUse}, but ${inUse} runs are claiming or running`);
    if (inUse > this.slots) fail(`${inUse} slots in use of ${this.slots}`);
    for (const [login, used] of Object.entries(logins)) {
      if ((state.loginsInUse[login] ?? 0) !== used) fail(`login ${login} has ${state.loginsInUse[login]} in use, but ${used} runs hold it`);
      const capacity = this.loginCapacity[login];
      if (capacity !== undefined && used > capacity) fail(`login ${login} has ${used} runs, over its capacity ${capacity}`);
    }
    if (Object.keys(state.loginsInUse).some((l) => !(l in logins)))
      fail(`loginsInUse names logins no run holds: ${JSON.stringify(state.loginsInUse)}`);
  }
}

function fail(message: string): never {
  throw new Error(message);
}
