/** The effects an outbox is performing: how many may be under way at once, and how many started and ended. */
export class UnderWay {
  private readonly inFlight = new Set<Promise<void>>();
  private startedTotal = 0;
  private performedTotal = 0;

  /** How many started, and how many ended with their record appended, since the outbox opened. */
  get counts(): { readonly started: number; readonly performed: number } {
    return { started: this.startedTotal, performed: this.performedTotal };
  }

  get size(): number {
    return this.inFlight.size;
  }

  /** Resolves once fewer than `limit` are under way. */
  async room(limit: number): Promise<void> {
    while (this.inFlight.size >= limit) await Promise.race(this.inFlight);
  }

  /** Tracks `performing` until it settles; `failed` is told what it rejects with (and may throw it on). */
  add(performing: Promise<void>, failed: (error: unknown) => void): void {
    this.startedTotal++;
    const ended: Promise<void> = performing.then(() => {
      this.performedTotal++;
    }, failed);
    const tracked = ended.finally(() => this.inFlight.delete(tracked));
    this.inFlight.add(tracked);
  }

  /** Resolves once every effect under way has ended; rejects as one of them does. */
  async all(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all(this.inFlight);
  }

  /** The effects under way now, to wait for alongside something else. */
  now(): Promise<void>[] {
    return [...this.inFlight];
  }
}
