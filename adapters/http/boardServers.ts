import { setMaxListeners } from 'node:events';

/**
 * The boards a computer may talk to (`--server URL1,URL2,…`, docs/rules.md#postgresql-board): all serve one log, so any of
 * them will do. The push stream moves to the next when its connection to the current one drops or
 * cannot be made; the HTTP calls (claims, heartbeats, completions) follow it, so a computer's
 * heartbeats reach the board that holds its stream, the one that reaps its claims. A call still waiting
 * on a board left behind is cut (`signalOf`), to be made again on the next: a completion never waits on
 * a frozen board while another can take it.
 */
export class BoardServers {
  private index = 0;
  private readonly leaving = new Map<string, AbortController>();

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
    if (this.urls.length > 1 && this.current() === url) {
      this.index = (this.index + 1) % this.urls.length;
      this.leaving.get(url)?.abort(new Error(`the board at ${url} was left for ${this.current()}`));
      this.leaving.delete(url);
    }
  }

  /** Aborted when the stream leaves the board at `url` for another: a call to it ends, and is made again there. */
  signalOf(url: string): AbortSignal {
    let controller = this.leaving.get(url);
    if (!controller) {
      controller = new AbortController();
      // One listener per call in flight (as many as the runs): no leak, however many.
      setMaxListeners(0, controller.signal);
      this.leaving.set(url, controller);
    }
    return controller.signal;
  }

  /** For messages: the one URL, or the list. */
  toString(): string {
    return this.urls.join(',');
  }
}
