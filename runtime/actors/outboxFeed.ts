import type { DomainEvent } from '../../events/catalog.ts';

/**
 * The events a following outbox was handed by its store's subscription, in order, each the store could
 * read (rows it cannot read leave gaps in the seqs, and nothing else does): an outbox reads its pages
 * from here rather than the log.
 */
export class OutboxFeed {
  private fed: DomainEvent[] = [];
  /** Set once the outbox follows: from then on every event past its cursor is handed over, in order. */
  private following = false;

  get isFollowing(): boolean {
    return this.following;
  }

  get isEmpty(): boolean {
    return this.fed.length === 0;
  }

  follow(): void {
    this.following = true;
  }

  /** The subscription failed: it hands over nothing more, and pages are read from the log again. */
  failed(): void {
    this.following = false;
  }

  push(event: DomainEvent): void {
    this.fed.push(event);
  }

  /** A page taken from the feed and not taken after all (another process took first): it goes back in front. */
  handBack(page: readonly DomainEvent[]): void {
    if (this.following) this.fed = [...page, ...this.fed];
  }

  /**
   * Up to `size` events past `cursor`, when the feed has them joined up with it; an empty page when a
   * follower's feed has nothing yet; null when the log must be read (the feed then starts afresh).
   */
  next(cursor: number, size: number): DomainEvent[] | null {
    let stale = 0;
    while (stale < this.fed.length && this.fed[stale]!.seq <= cursor) stale++;
    if (stale) this.fed = this.fed.slice(stale);
    if (this.fed.length > 0 && (this.following || this.fed[0]!.seq === cursor + 1)) {
      const page = this.fed.slice(0, size);
      this.fed = this.fed.slice(size);
      return page;
    }
    // A follower's feed starts at the cursor and misses nothing the store can read (its seqs skip only
    // unreadable rows), so an empty feed means there is nothing yet: reading the log here would cost a
    // query each time a drain ends.
    if (this.following) return [];
    this.fed = [];
    return null;
  }
}
