import { type ChangesBody, changesToWire } from '../../events/wire/changes.ts';
import { type UsageBody, usageToWire } from '../../events/wire/usage.ts';
import { type BoardState, isConnected, isTerminal, type RunState, workers } from './boardState.ts';
import { hasRoom, waitsForRoom } from './offerPolicy.ts';
import type { RunPast, SettledRun } from './settledRun.ts';

/**
 * What the server reads from the board's state to answer a request without deciding anything:
 * `GET /v1/runs/{run_id}`, a claim's body, a heartbeat, a run token's holder, a computer's token.
 */

/** The body of `GET /v1/runs/{run_id}`, or null for 404. */
export interface RunView {
  run_id: string;
  lane: string;
  state: RunState;
  computer_id?: string;
  reply?: string;
  error?: string;
  /** docs/rules.md#wire-and-cli `usage`, as its completion sent it. */
  usage?: UsageBody;
  /** What its turn changed in its worktree (README "Workspaces in a repository"), once it finished. */
  changes?: ChangesBody;
  /** What its agent is doing now, while it runs: kept in the board's memory only (see RunProgress). */
  progress?: string;
}

/** A live run's view, or null when the state does not hold it (no such run, or one that settled: see `settledView`). */
export function runView(state: BoardState, runId: string): RunView | null {
  const run = state.runs[runId];
  return run ? viewOf({ ...run, error: null }) : null;
}

/** A settled run's view, from its stream (a terminal run left the state: see `settledRun`). */
export function settledView(run: SettledRun): RunView {
  return viewOf(run);
}

function viewOf(run: Pick<SettledRun, 'runId' | 'lane' | 'computerId' | 'reply' | 'error' | 'usage' | 'changes'> & { state: RunState }): RunView {
  return {
    run_id: run.runId,
    lane: run.lane,
    state: run.state,
    ...(run.computerId !== null ? { computer_id: run.computerId } : {}),
    ...(run.reply !== null ? { reply: run.reply } : {}),
    ...(run.error !== null ? { error: run.error } : {}),
    ...(run.usage ? { usage: usageToWire(run.usage) ?? {} } : {}),
    ...(run.changes ? { changes: changesToWire(run.changes) } : {}),
  };
}

/** The run as the claim answer carries it: `{run: {run_id, lane, prompt, agent_id, timeout_s}}`. */
export function claimedRunBody(state: BoardState, runId: string) {
  const run = state.runs[runId];
  if (!run) return null;
  return {
    run_id: run.runId,
    lane: run.lane,
    prompt: run.prompt,
    agent_id: run.agentId,
    timeout_s: run.timeoutS,
    ...(run.repo === undefined ? {} : { repo: run.repo }),
    ...(run.base === undefined ? {} : { base: run.base }),
  };
}

/** True while a cancel of a claimed run waits for its holder: the heartbeat answer's `cancel_requested`. */
export function cancelRequested(state: BoardState, runId: string): boolean {
  const run = state.runs[runId];
  return run?.cancelRequested === true && !isTerminal(run.state);
}

/** The body of a cancel's 202: the run as it stands once the cancel is decided, and what that means in words. */
export interface CancelAnswer {
  run_id: string;
  state: RunState;
  computer_id?: string;
  detail: string;
}

/** `settled`: the run's end from its stream, once it left the state (cancelled unclaimed, or finished meanwhile). */
export function cancelAnswer(state: BoardState, runId: string, settled: SettledRun | null = null): CancelAnswer | null {
  const run = state.runs[runId] ?? settled;
  if (!run) return null;
  if (run.computerId === null) return { run_id: runId, state: run.state, detail: 'withdrawn before it was claimed' };
  // Terminal already: its holder finished it between the cancel and this read.
  const detail = isTerminal(run.state) ? `${run.state} on ${run.computerId}` : `stopping on ${run.computerId}`;
  return { run_id: runId, state: run.state, computer_id: run.computerId, detail };
}

/** The computer holding the run's claim while it is not terminal (who its run token is good for), else null. */
export function holder(state: BoardState, runId: string): string | null {
  const run = state.runs[runId];
  return run && !isTerminal(run.state) ? run.computerId : null;
}

export interface OpenClaim {
  readonly runId: string;
  readonly computerId: string;
  readonly claimedAt: number;
}

/** Claimed runs that are not terminal, with their claim time: the lease monitor's starting point. */
export function openClaims(state: BoardState): OpenClaim[] {
  return Object.keys(state.open).map((runId) => {
    const run = state.runs[runId]!;
    return { runId, computerId: run.computerId!, claimedAt: run.claimedAt! };
  });
}

/**
 * The next turn of each free lane (no run of it claimed and open) while it waits unclaimed and some
 * connected computer takes work: the offer monitor's watch list. O(lanes waiting), read each round.
 * While no computer has room in its window, a lane waiting for room is left out: offering it again
 * would decide nothing, and the next claim or connect takes it (docs/rules.md#dispatch).
 */
export function idleNextTurns(state: BoardState): string[] {
  const computers = workers(state);
  if (computers.length === 0) return [];
  const room = computers.some((c) => hasRoom(state, c));
  const runs: string[] = [];
  for (const lane of Object.keys(state.waiting)) {
    const queue = state.lanes[lane]!;
    if (queue.holder !== null || queue.unclaimed.length === 0) continue;
    if (!room && waitsForRoom(state, lane)) continue;
    runs.push(queue.unclaimed[0]!);
  }
  return runs;
}

/** The stored hash of a computer's token, or null for a computer the board does not know. */
export function tokenHashOf(state: BoardState, computerId: string): string | null {
  return state.computers[computerId]?.tokenHash ?? null;
}

/**
 * The heartbeat's answer (heartbeats are not recorded): 200 with `cancel_requested`, 410 `resolved`
 * once the run is terminal, 404/409 for a run this computer does not hold. `markRunning` says the
 * server should record `board.run.started` (the first heartbeat of a claimed run).
 */
export type HeartbeatAnswer =
  | { readonly status: 200; readonly cancelRequested: boolean; readonly markRunning: boolean }
  | { readonly status: 404 | 409 | 410; readonly code: string };

/** `past`: what the log says of a run the state does not hold (see `settledRun`); undefined: not looked up. */
export function heartbeatAnswer(state: BoardState, runId: string, computerId: string, past?: Exclude<RunPast, 'live'>): HeartbeatAnswer {
  const run = state.runs[runId];
  if (!run) {
    if (!past) return { status: 404, code: 'unknown_run' };
    return past.computerId === computerId ? { status: 410, code: 'resolved' } : { status: 409, code: 'not_holder' };
  }
  if (run.computerId !== computerId) return { status: 409, code: 'not_holder' };
  if (isTerminal(run.state)) return { status: 410, code: 'resolved' };
  return { status: 200, cancelRequested: run.cancelRequested, markRunning: run.state === 'claimed' };
}

/** A computer as `runledger computer list` shows it: connected since when, or last seen when. */
export interface ComputerListing {
  readonly computerId: string;
  readonly connected: boolean;
  readonly connectedAt: number | null;
  readonly lastSeenAt: number | null;
  /** The repositories it announced at its latest connect, its default first (null: it announced none, docs/rules.md#workspaces). */
  readonly repos: string[] | null;
}

export function computerList(state: BoardState): ComputerListing[] {
  return Object.keys(state.computers)
    .sort()
    .map((computerId) => {
      const computer = state.computers[computerId]!;
      const connected = isConnected(state, computerId);
      const { repos } = computer;
      return {
        computerId,
        connected,
        connectedAt: connected ? computer.connectedAt : null,
        lastSeenAt: connected ? null : computer.lastSeenAt,
        repos: repos === undefined ? null : repos.default === null ? repos.names : [repos.default, ...repos.names.filter((n) => n !== repos.default)],
      };
    });
}
