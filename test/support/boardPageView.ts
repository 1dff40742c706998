import { applyDelta } from '../../web/static/boardModel.js';

/** A message of the board page's live socket, as far as its view goes. */
interface LiveMessage {
  readonly type: string;
  /** A hello's page: only a board page's hello carries the board's view. */
  readonly view?: string;
  readonly snapshot?: unknown;
  readonly version?: number;
  readonly from?: number;
  readonly to?: number;
}

/**
 * The board page's view as the page holds it (web/static/board.js): its hello's, then each delta
 * applied in turn with the page's own reader. A delta that does not follow the view held is an error,
 * as it sends the page back for a fresh hello.
 */
export class BoardPageView<V> {
  view: V | null = null;
  private version = 0;

  /** Takes one message of the socket; true when the view changed with it. */
  take(message: LiveMessage): boolean {
    if (message.type === 'hello' && message.view === 'board') {
      this.view = message.snapshot as V;
      this.version = message.version ?? 0;
      return true;
    }
    if (message.type !== 'delta') return false;
    if (this.view === null || message.from !== this.version)
      throw new Error(`a delta from view ${message.from} reached a page holding view ${this.view === null ? 'none' : this.version}`);
    this.view = applyDelta(this.view, message);
    this.version = message.to ?? this.version + 1;
    return true;
  }
}
