/**
 * The boards a computer may talk to (`--server URL1,URL2,…`, docs/rules.md#postgresql-board): all serve one log, so any of
 * them will do. The push stream moves to the next when its connection to the current one drops or
 * cannot be made; the HTTP calls (claims, heartbeats, completions) follow it, so a computer's
 * heartbeats reach the board that holds its stream, the one that reaps its claims.
 */
export class BoardServers {
  private index = 0;

  constructor(readonly urls: readonly string[]) {
    if (urls.length === 0) throw new Error('no board URL given');
  }

  /** `--server`'s text: one URL or several, comma-separated. */
  static parse(text: string): BoardServers {
    return new BoardServers(
      text
        .split(',')
        .map((url) => url.trim())
        .filter(Boolean),
    );
  }

  current(): string {
    return this.urls[this.index]!;
  }

  /** The board at `url` did not answer (or dropped the stream): the next one is current, unless another call moved on already. */
  failed(url: string): void {
    if (this.urls.length > 1 && this.current() === url) this.index = (this.index + 1) % this.urls.length;
  }

  /** For messages: the one URL, or the list. */
  toString(): string {
    return this.urls.join(',');
  }
}
