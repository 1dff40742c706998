import type { Prng } from './prng.ts';
import { Owner, type Scheduler } from './scheduler.ts';

/** How one computer's link to the board behaves right now (the fault plan sets it). */
export interface LinkState {
  /** Extra delay each way, ms (0: 1–20 ms). */
  slowMs: number;
  /** Extra delay of HTTP calls only, ms: an overloaded front end while the push stream flows. */
  callSlowMs: number;
  /** Chance that one message (a call's request or answer, a frame) is lost. */
  loss: number;
  /** Chance that a frame is delivered twice. */
  dup: number;
  /** The board cannot be reached at all (connection refused). */
  unreachable: boolean;
}

export const healthyLink = (): LinkState => ({ slowMs: 0, callSlowMs: 0, loss: 0, dup: 0, unreachable: false });

/** What the invariants need to know of a link: when it was last not healthy. */
export interface LinkHistory {
  readonly spans: [number, number][];
  since: number | null;
}

/**
 * The network between the board and the computers: each message is a task on the scheduler, delivered
 * after a drawn delay, lost or repeated as the link's state says. A message whose sender's or
 * receiver's life ended is never delivered.
 */
export class SimNetwork {
  readonly links = new Map<string, LinkState>();
  readonly history = new Map<string, LinkHistory>();
  readonly owner = new Owner('network');
  delivered = 0;
  lost = 0;

  constructor(
    private readonly scheduler: Scheduler,
    private readonly prng: Prng,
  ) {}

  link(computer: string): LinkState {
    let link = this.links.get(computer);
    if (!link) {
      link = healthyLink();
      this.links.set(computer, link);
      this.history.set(computer, { spans: [], since: null });
    }
    return link;
  }

  /** Sets a link's state; an impaired one is remembered (with when) for the invariants that allow for it. */
  set(computer: string, state: Partial<LinkState>): void {
    const link = this.link(computer);
    Object.assign(link, state);
    const history = this.history.get(computer)!;
    // Slowness is no impairment: every message still arrives, within 2 s (the invariants allow for that).
    const impaired = link.loss > 0 || link.unreachable;
    if (impaired && history.since === null) history.since = this.scheduler.now;
    if (!impaired && history.since !== null) {
      history.spans.push([history.since, this.scheduler.now]);
      history.since = null;
    }
  }

  /** Whether `computer`'s link was impaired at any time in [from, to], or a board was cut off then (any: its calls may have gone there). */
  impairedBetween(computer: string, from: number, to: number): boolean {
    return [computer, ...this.boards].some((name) => {
      const history = this.history.get(name);
      if (!history) return false;
      if (history.since !== null && history.since <= to) return true;
      return history.spans.some(([a, b]) => a <= to && b >= from);
    });
  }

  /** The boards (of several on one log) that a fault cut off from every computer at some time. */
  private readonly boards = new Set<string>();

  /** A board cut off from the network (or back on it): no computer reaches it, its streams broken. */
  cutOff(board: string, unreachable: boolean): void {
    this.boards.add(board);
    this.set(board, { unreachable });
  }

  /** The one-way delay of a message on this link, ms. */
  delay(computer: string, call = false): number {
    const link = this.link(computer);
    const slow = link.slowMs + (call ? link.callSlowMs : 0);
    return this.prng.int(1, 20) + (slow > 0 ? this.prng.int(0, slow) : 0);
  }

  /** Sends `deliver` over `computer`'s link unless it is lost; `at` orders messages of one stream (FIFO). */
  send(computer: string, owners: readonly Owner[], label: string, deliver: () => void, after = 0, reliable = false, call = false): boolean {
    const link = this.link(computer);
    if (!reliable && link.loss > 0 && this.prng.chance(link.loss)) {
      this.lost++;
      return false;
    }
    const due = Math.max(after, this.scheduler.now + this.delay(computer, call));
    const alive = () => owners.every((o) => o.alive);
    this.scheduler.at(due, this.owner, label, () => {
      if (!alive()) return;
      this.delivered++;
      deliver();
    });
    return true;
  }

  now(): number {
    return this.scheduler.now;
  }

  chance(p: number): boolean {
    return this.prng.chance(p);
  }

  /** Whether `computer` cannot reach the board (`board`, of several, when named). */
  isUnreachable(computer: string, board?: string): boolean {
    return this.link(computer).unreachable || (board !== undefined && this.boards.has(board) && this.link(board).unreachable);
  }
}
