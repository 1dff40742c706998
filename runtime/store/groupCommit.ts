import type { AppendRequest, AppendResult } from './eventStore.ts';

/** An append accepted by the group commit, answered once its transaction has ended. */
export interface PendingAppend {
  readonly request: AppendRequest;
  readonly resolve: (result: AppendResult) => void;
  readonly reject: (error: unknown) => void;
}

/** A batch that did not commit, or must count as not having: its chains break here and now, each append told `error`. */
export function failBatch(batch: readonly PendingAppend[], error: unknown): void {
  for (const p of batch) {
    p.request.chain?.chain.breakAt(p.request.chain.link);
    p.reject(error);
  }
}

/**
 * While a writer holds commits, a batch waits for more appends until it holds this many, or is this old
 * (real time, as the callers wait it: docs/architecture.md#real-time-waits).
 */
const HELD_BATCH_MAX = 256;
const HELD_BATCH_MS = 4;

/**
 * The group commit both stores share: the appends of one turn of the event loop (and those that come
 * while the last transaction commits) go to `commit` as one batch, one transaction, one fsync for all.
 * While a writer holds commits (more of its inputs are on their way), a batch waits a turn more, unless
 * it is full or old: a hold can delay a commit by a few milliseconds, never keep it back. One batch at
 * a time: `commit` may be synchronous (SQLite under `--sync normal`) or return the promise of its
 * transaction (PostgreSQL) or of its fsync (SQLite under `--sync full`), and the next batch starts when
 * it has ended, so a chain's later append sees how its earlier one ended. While one is in flight the
 * main thread is free and the appends it takes gather into the next batch: under load one fsync covers
 * many appends.
 */
export class GroupCommit {
  private pending: PendingAppend[] = [];
  private flushScheduled = false;
  private committing: Promise<void> | null = null;
  /** Writers asking the group commit to wait for their next appends (see `EventStore.holdCommits`). */
  private holds = 0;
  private batchStartedAt = 0;

  constructor(private readonly commit: (batch: readonly PendingAppend[]) => void | Promise<void>) {}

  /**
   * An append as a store takes it: refused at once when `refusal` (the store closed or broken) or
   * `check` (the codec's) says why, its chain broken here, before any later append of the chain is
   * taken; else answered once the batch it joins has committed or failed.
   */
  take(request: AppendRequest, refusal: Error | null, check: (request: AppendRequest) => void): Promise<AppendResult> {
    try {
      if (refusal) throw refusal;
      check(request);
    } catch (error) {
      request.chain?.chain.breakAt(request.chain.link);
      return Promise.reject(error);
    }
    return this.append(request);
  }

  private append(request: AppendRequest): Promise<AppendResult> {
    return new Promise<AppendResult>((resolve, reject) => {
      if (this.pending.length === 0) this.batchStartedAt = performance.now();
      this.pending.push({ request, resolve, reject });
      this.scheduleFlush();
    });
  }

  hold(): () => void {
    this.holds++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.holds--;
      if (this.holds === 0 && this.pending.length > 0) this.scheduleFlush();
    };
  }

  /** Commits what is pending now, whoever holds it back: nothing accepted is lost to a close. */
  async drain(): Promise<void> {
    while (this.committing || this.pending.length > 0) {
      if (this.committing) await this.committing;
      else this.flush(true);
    }
  }

  private scheduleFlush(): void {
    if (this.flushScheduled || this.committing) return;
    this.flushScheduled = true;
    setImmediate(() => this.flush());
  }

  private flush(closing = false): void {
    this.flushScheduled = false;
    if (this.committing) return;
    if (!closing && this.holds > 0 && this.pending.length < HELD_BATCH_MAX && performance.now() - this.batchStartedAt < HELD_BATCH_MS) {
      this.scheduleFlush();
      return;
    }
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    const committed = this.commit(batch);
    if (!committed) return;
    this.committing = committed.finally(() => {
      this.committing = null;
      if (this.pending.length > 0) {
        this.batchStartedAt = performance.now();
        this.scheduleFlush();
      }
    });
  }
}
