import type { z } from 'zod';
import type { RunStateSchema } from '../../events/boardEvents.ts';
import type { RepoAnnouncement } from '../../events/workspace.ts';

export type RunState = z.infer<typeof RunStateSchema>;

export interface BoardRun {
  readonly runId: string;
  readonly lane: string;
  prompt: string;
  readonly agentId: string | null;
  readonly timeoutS: number | null;
  /** The repository it works in and its base ref, as submitted (absent: none given). */
  readonly repo?: string;
  readonly base?: string;
  /** Submission order: of two runs of a lane, the smaller one is the earlier turn. */
  readonly submittedOrder: number;
  readonly submittedAt: number;
  state: RunState;
  /** The computer holding its claim, from the claim on (kept once terminal, for `GET`). */
  computerId: string | null;
  /** The life of its holder's daemon the claim was granted to (null: an older computer sent none). */
  incarnation: string | null;
  /** Its run token is bound to `incarnation` (claims decided since tokens were; absent: the computer's token of older claims). */
  bound?: true;
  claimedAt: number | null;
  cancelRequested: boolean;
  /** Computers its frame was pushed to, sorted: a cancel before the claim is announced to each. */
  offeredTo: string[];
  /** Its last reply while it runs (a terminal run leaves the state: its end is read from its stream, see `settledRun`). */
  reply: string | null;
}

/** What an idempotency key names: the run it created, and its body, for a submission with the key again to be compared with. */
export interface KeyedSubmission {
  readonly runId: string;
  readonly lane: string;
  readonly prompt: string;
  readonly agentId: string | null;
  readonly timeoutS: number | null;
  readonly repo?: string;
  readonly base?: string;
}

export interface BoardLane {
  /** Runs not yet claimed (and not cancelled), in submission order. */
  unclaimed: string[];
  /** The run of this lane claimed and not terminal: the open turn of the conversation. */
  holder: string | null;
  /** Runs told `conversation_busy` while the open turn lasts: their frames are resent when it ends. */
  waiters: string[];
  /** The computer that ran the lane's last turn: its sessions live there, so it is offered the lane first. */
  lastComputer: string | null;
  /**
   * The computer its unclaimed runs were last offered to, one at a time (docs/rules.md#dispatch): a later
   * run of the lane follows them there. Absent: offered to nobody yet, or to several at once (older offers).
   */
  offer?: string;
}

export interface BoardComputer {
  readonly tokenHash: string;
  /** When its push stream connected, while it is connected. */
  connectedAt: number | null;
  /** When it was last heard from before its stream closed (a pong, an ack, or the close itself). */
  lastSeenAt: number | null;
  /** The board that holds its stream, while it is connected, when that board said (docs/rules.md#postgresql-board: several boards on one log). */
  via?: string;
  /** The daemon's life on that stream, while it is connected, when its board recorded one. */
  incarnation?: string;
  /** How many runs it was offered, ever (absent: none): of two computers as free, the one offered fewer gets the next. */
  offers?: number;
  /** The repositories it announced at its latest connect, kept while it is away (absent: it announced none, or never connected). */
  repos?: RepoAnnouncement;
  /** Its latest connect announced no repositories (an older computer): it is taken to have any. */
  silent?: true;
}

/**
 * The board's state (docs/rules.md#wire-and-cli): plain JSON, so it is checkpointed as the `board` projection.
 * It holds what is live: a run leaves `runs` once it is terminal (see `settledRun` for what then).
 * Indexes keep the hot paths off whole-state scans: a lane's queue by lane id, the lanes that have
 * unclaimed runs, the claimed runs that are not terminal, the connected computers.
 */
export interface BoardState {
  /** The next submission order. */
  submitted: number;
  runs: Record<string, BoardRun>;
  lanes: Record<string, BoardLane>;
  /** Lanes with at least one unclaimed run: what a connecting computer is offered. */
  waiting: Record<string, true>;
  /** Claimed runs not yet terminal: what the lease monitor watches. */
  open: Record<string, true>;
  /**
   * Idempotency key → the run it created. Kept after the run settled (docs/rules.md#wire-and-cli: the key answers the
   * first run for good): it grows with keyed submissions only.
   */
  idempotency: Record<string, KeyedSubmission>;
  /** Runs that settled and left `runs`, counted by their end (for `/metrics`). */
  settled: Partial<Record<RunState, number>>;
  computers: Record<string, BoardComputer>;
  /** Connected computers, sorted. */
  connected: string[];
  /** Connected computers that declined a frame because they drain: offered nothing until they connect again. */
  draining: Record<string, true>;
  /** Per computer, how many runs were pushed to it and are still unclaimed: what it has waiting. */
  pushed: Record<string, number>;
  /** Per computer, how many claimed runs it holds that are not terminal: the slots it has busy. */
  holding: Record<string, number>;
  /** Per computer, how many lanes with unclaimed runs are offered to it (`BoardLane.offer`): what it has waiting to claim. */
  offeredLanes: Record<string, number>;
  /**
   * Lanes with unclaimed runs offered to nobody (never yet, or their computer left), in the order they
   * came to wait: where a computer that has room again takes its next lane from (docs/rules.md#dispatch).
   */
  unoffered: string[];
  /**
   * Per repository name, how many computers have it by their latest announcement; how many computers
   * announced theirs, and how many connected last without announcing (older ones, taken to have any)
   * (docs/rules.md#workspaces): what a submission naming a repository is checked against.
   */
  repoHolders: Record<string, number>;
  announcers: number;
  silent: number;
}

export function initialBoardState(): BoardState {
  return {
    submitted: 0,
    runs: {},
    lanes: {},
    waiting: {},
    open: {},
    idempotency: {},
    settled: {},
    computers: {},
    connected: [],
    draining: {},
    pushed: {},
    holding: {},
    offeredLanes: {},
    unoffered: [],
    repoHolders: {},
    announcers: 0,
    silent: 0,
  };
}

const TERMINAL: ReadonlySet<RunState> = new Set(['succeeded', 'failed', 'cancelled', 'resolved']);

export function isTerminal(state: RunState): boolean {
  return TERMINAL.has(state);
}

/**
 * Whether a close reported by `board` is of a stream the computer has since opened on another board (a
 * late close, from the board it left): that board's connection stands.
 */
export function closedElsewhere(state: BoardState, computerId: string, board: string | undefined): boolean {
  const via = state.computers[computerId]?.via;
  return board !== undefined && via !== undefined && via !== board;
}

/**
 * Whether a connection of `computerId`'s daemon life `incarnation` to `board` meets a stream the log has
 * held on another board by another life (or by an unnamed one): the one push stream a computer has,
 * across the boards of its log, unless that board's hold lapsed (`over` names it).
 */
export function connectedElsewhere(
  state: BoardState,
  computerId: string,
  board: string | undefined,
  incarnation: string | null,
  over: string | undefined,
): boolean {
  if (!isConnected(state, computerId)) return false;
  const computer = state.computers[computerId]!;
  const via = computer.via;
  if (via === undefined || board === undefined || via === board) return false;
  if (incarnation !== null && computer.incarnation === incarnation) return false;
  return over !== via;
}

export function isConnected(state: BoardState, computerId: string): boolean {
  return state.connected[sortedIndex(state.connected, computerId)] === computerId;
}

/** Connected and not draining: a computer that takes new work. */
export function takesWork(state: BoardState, computerId: string): boolean {
  return isConnected(state, computerId) && !state.draining[computerId];
}

/** The connected computers that take new work, sorted. */
export function workers(state: BoardState): string[] {
  return state.connected.filter((c) => !state.draining[c]);
}

/** Where `value` is, or would go, in a sorted list. */
export function sortedIndex(list: readonly string[], value: string): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
