import { hashToken, sameSecret } from '../../adapters/http/tokens.ts';
import { SUBMIT_TOKENS_STREAM } from '../../events/tokenEvents.ts';
import type { EventStore } from '../../runtime/store/eventStore.ts';

/**
 * The submit tokens a board takes: the token file of a SQLite board (none on PostgreSQL) and every
 * token `runledger token add` recorded and `runledger token revoke` did not withdraw (docs/rules.md#postgresql-board), by hash. Those are read from the log when the board
 * starts, as they commit (`observe`), and again before a token nobody knows is refused: one added by
 * another process a moment ago is taken at once, whichever board the request reaches.
 */
export class SubmitTokens {
  private readonly hashes = new Set<string>();
  /** The hash of each token recorded, by name: what a revocation withdraws. */
  private readonly byName = new Map<string, string>();
  private version = 0;

  constructor(
    private readonly store: EventStore,
    private readonly fileToken: string | null,
  ) {}

  /** Whether `token` is one this board knows now (for the web view's synchronous check). */
  knows(token: string | null): boolean {
    if (token === null) return false;
    if (this.fileToken !== null && sameSecret(token, this.fileToken)) return true;
    return this.hashes.has(hashToken(token));
  }

  /** Whether `token` is a submit token: known now, or recorded since the board last read them. */
  async accepts(token: string | null): Promise<boolean> {
    if (token === null) return false;
    if (this.knows(token)) return true;
    await this.refresh();
    return this.knows(token);
  }

  /** Reads the tokens recorded past the last one read. */
  async refresh(): Promise<void> {
    for (const event of await this.store.readStream(SUBMIT_TOKENS_STREAM, this.version)) {
      if (event.type === 'token.added') {
        this.hashes.add(event.data.tokenHash);
        this.byName.set(event.data.name, event.data.tokenHash);
      }
      if (event.type === 'token.revoked') this.hashes.delete(this.byName.get(event.data.name) ?? '');
      this.version = Math.max(this.version, event.version);
    }
  }
}
