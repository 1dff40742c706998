import type { BoardAnswer } from '../../adapters/http/boardClient.ts';
import type { UsageBody } from '../../events/wire/usage.ts';

/** One call the computer made to the board, as the board saw it. */
export type BoardCall =
  | { readonly call: 'claim'; readonly runId: string; readonly incarnation?: string }
  | { readonly call: 'heartbeat'; readonly runId: string; readonly token: string; readonly progress?: string }
  | { readonly call: 'reply'; readonly runId: string; readonly token: string; readonly text: string }
  | {
      readonly call: 'complete';
      readonly runId: string;
      readonly token: string;
      readonly result: { ok: boolean; error?: string };
      readonly usage?: UsageBody;
    };

interface Offered {
  readonly lane: string;
  readonly prompt: string;
  readonly timeoutS: number | null;
}

/**
 * The four board calls a computer makes (docs/rules.md#wire-and-cli), answered the way the board answers them,
 * with the knobs a test needs: a cancel asked for, a run resolved elsewhere, completions that fail
 * for a while, a claim held until the test lets it through. Everything outside the machine is faked
 * here and nothing else: the log, the actors and the agent processes stay real.
 */
export class StandInBoard {
  readonly calls: BoardCall[] = [];
  private readonly offered = new Map<string, Offered>();
  private readonly cancels = new Set<string>();
  private readonly resolved = new Set<string>();
  private readonly completionFailures = new Map<string, number[]>();
  private readonly held = new Map<string, Promise<void>>();
  private readonly heldCompletions = new Map<string, Promise<void>>();
  private readonly replyRefusals = new Map<string, number>();
  /** Set by `serialiseLanes`: each lane's open turn (claimed, its completion not yet acknowledged). */
  private openTurns: Map<string, string> | null = null;
  /** Set by `holdPerLife`: the life (incarnation) each granted run is held for, undefined for an older computer. */
  private holders: Map<string, string | undefined> | null = null;
  private readonly lostAnswers = new Set<string>();
  /** Set by `predateUsage`: completions carrying `usage` are refused as a board older than it refuses them. */
  private usageRefused = false;
  /** The claims answered `409 conversation_busy`, in order (only once `serialiseLanes` was called). */
  readonly busyAnswers: string[] = [];

  /** A run the board holds, as a claim answer will carry it. */
  offer(runId: string, run: { lane: string; prompt: string; timeoutS?: number | null }): this {
    this.offered.set(runId, { lane: run.lane, prompt: run.prompt, timeoutS: run.timeoutS ?? null });
    return this;
  }

  /** The next heartbeats of `runId` answer `cancel_requested: true`. */
  cancel(runId: string): void {
    this.cancels.add(runId);
  }

  /** The run was reaped or closed elsewhere: its heartbeats answer 410 from now on. */
  resolve(runId: string): void {
    this.resolved.add(runId);
    this.closeTurn(runId);
  }

  /** The next completions of `runId` answer these statuses, in order; then 200. */
  failCompletions(runId: string, ...statuses: number[]): void {
    this.completionFailures.set(runId, statuses);
  }

  /** The claim of `runId` is answered only once the returned function is called. */
  holdClaim(runId: string): () => void {
    let release!: () => void;
    this.held.set(runId, new Promise<void>((resolve) => (release = resolve)));
    return () => release();
  }

  /** Replies of `runId` are refused with `status` (a reply too large, say: 413). */
  refuseReplies(runId: string, status: number): void {
    this.replyRefusals.set(runId, status);
  }

  /** The completions of `runId` are answered only once the returned function is called. */
  holdCompletions(runId: string): () => void {
    let release!: () => void;
    this.heldCompletions.set(runId, new Promise<void>((resolve) => (release = resolve)));
    return () => release();
  }

  /**
   * Serialises each lane's turns as the board does (docs/rules.md#wire-and-cli): from the grant of a run's claim
   * until the board has answered its completion (or the run is resolved), a claim of another run of
   * its lane is answered `409 conversation_busy`.
   */
  serialiseLanes(): this {
    this.openTurns = new Map();
    return this;
  }

  /**
   * Holds each granted run for the life that claimed it, as the board does (docs/rules.md#wire-and-cli): a claim of
   * it naming another incarnation is answered `409 claimed_elsewhere`.
   */
  holdPerLife(): this {
    this.holders = new Map();
    return this;
  }

  /** Answers as a board older than docs/rules.md#wire-and-cli's `usage` does: a completion carrying it is 422 naming the field. */
  predateUsage(): this {
    this.usageRefused = true;
    return this;
  }

  /** The next claim of `runId` is granted, and its answer lost on the way back (status 0, a network error). */
  loseNextAnswer(runId: string): void {
    this.lostAnswers.add(runId);
  }

  callsOf(runId: string, call?: BoardCall['call']): BoardCall[] {
    return this.calls.filter((c) => c.runId === runId && (call === undefined || c.call === call));
  }

  async claim(runId: string, incarnation?: string): Promise<BoardAnswer> {
    this.calls.push({ call: 'claim', runId, ...(incarnation ? { incarnation } : {}) });
    await this.held.get(runId);
    const run = this.offered.get(runId);
    if (!run) return { status: 404, body: { detail: { error: 'not_found' } } };
    // A terminal run is gone, even for its holder (docs/rules.md#wire-and-cli).
    if (this.resolved.has(runId)) return { status: 410, body: { detail: { error: 'gone' } } };
    if (this.holders) {
      const holder = this.holders.get(runId);
      if (holder !== undefined && incarnation !== undefined && holder !== incarnation)
        return { status: 409, body: { detail: { error: 'claimed_elsewhere' } } };
      if (!this.holders.has(runId)) this.holders.set(runId, incarnation);
    }
    if (this.openTurns) {
      const open = this.openTurns.get(run.lane);
      if (open !== undefined && open !== runId) {
        this.busyAnswers.push(runId);
        return { status: 409, body: { detail: { error: 'conversation_busy' } } };
      }
      this.openTurns.set(run.lane, runId);
    }
    if (this.lostAnswers.delete(runId)) return { status: 0 };
    return {
      status: 200,
      body: {
        run: { run_id: runId, lane: run.lane, prompt: run.prompt, agent_id: null, timeout_s: run.timeoutS },
        run_token: this.tokenOf(runId),
        skills: [],
      },
    };
  }

  async heartbeat(runId: string, token: string, progress?: string): Promise<BoardAnswer> {
    this.calls.push({ call: 'heartbeat', runId, token, ...(progress === undefined ? {} : { progress }) });
    if (this.resolved.has(runId)) return { status: 410, body: { detail: { error: 'resolved' } } };
    return { status: 200, body: { cancel_requested: this.cancels.has(runId) } };
  }

  async reply(runId: string, token: string, text: string): Promise<BoardAnswer> {
    this.calls.push({ call: 'reply', runId, token, text });
    const refused = this.replyRefusals.get(runId);
    if (refused !== undefined) return { status: refused, body: { detail: { error: 'reply_refused' } } };
    return { status: 200, body: {} };
  }

  async complete(runId: string, token: string, result: { ok: boolean; error?: string }, usage?: UsageBody | null): Promise<BoardAnswer> {
    this.calls.push({ call: 'complete', runId, token, result, ...(usage ? { usage } : {}) });
    if (usage && this.usageRefused) return { status: 422, body: { detail: { error: 'invalid_body', message: 'body: Unrecognized key: "usage"' } } };
    await this.heldCompletions.get(runId);
    const failing = this.completionFailures.get(runId);
    const status = failing?.shift();
    if (status !== undefined) return { status };
    this.closeTurn(runId);
    return { status: 200, body: {} };
  }

  /** The run's turn is over on the board: its lane's next run may be claimed. */
  private closeTurn(runId: string): void {
    const lane = this.offered.get(runId)?.lane;
    if (lane !== undefined && this.openTurns?.get(lane) === runId) this.openTurns.delete(lane);
  }

  tokenOf(runId: string): string {
    return `token-of-${runId}`;
  }
}
