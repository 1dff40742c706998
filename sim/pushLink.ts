import { EventEmitter } from 'node:events';
import type WebSocket from 'ws';
import type { SimNetwork } from './network.ts';
import type { Owner } from './scheduler.ts';

const CONNECTING = 0;
const OPEN = 1;
const CLOSED = 3;

/**
 * One end of a simulated push stream, shaped as much like a `ws` WebSocket as the hub and the client
 * use it: readyState, send, close, terminate, ping, and the events they listen to. Messages go over the
 * SimNetwork in order (a stream is FIFO: each is delivered no earlier than the one before it).
 */
export class SimSocket extends EventEmitter {
  readyState = CONNECTING;
  peer: SimSocket | null = null;
  private lastDue = 0;

  constructor(
    private readonly network: SimNetwork,
    private readonly computer: string,
    /** The lives whose end ends this socket's traffic: its own side's and the peer's. */
    readonly owners: Owner[],
    private readonly side: 'board' | 'computer',
  ) {
    super();
  }

  send(text: string): void {
    if (this.readyState !== OPEN || !this.peer) return;
    const peer = this.peer;
    const link = this.network.link(this.computer);
    const deliver = () => {
      if (peer.readyState === OPEN) peer.emit('message', Buffer.from(text));
    };
    const sent = this.network.send(this.computer, this.owners, `${this.side} sends ${text.slice(0, 60)}`, deliver, this.lastDue);
    if (!sent) {
      // A message lost on a stream is a connection that broke: both ends see it close.
      this.cut(1006);
      return;
    }
    this.lastDue = this.network.now();
    if (link.dup > 0 && this.network.chance(link.dup)) this.network.send(this.computer, this.owners, 'duplicate', deliver, this.lastDue);
  }

  ping(): void {
    if (this.readyState !== OPEN || !this.peer) return;
    const peer = this.peer;
    this.network.send(this.computer, this.owners, 'ping', () => {
      if (peer.readyState === OPEN) this.network.send(this.computer, this.owners, 'pong', () => this.readyState === OPEN && this.emit('pong'));
    });
  }

  close(code = 1000, reason = ''): void {
    if (this.readyState === CLOSED) return;
    const peer = this.peer;
    this.closeHere(code, reason);
    // A close once sent reaches the peer even if this end's process dies just after (the OS sends it).
    if (peer) this.network.send(this.computer, [peer.own], `close ${code}`, () => peer.closeHere(code, reason), this.lastDue, true);
  }

  terminate(): void {
    this.close(1006, '');
  }

  /** The connection broke (a cut, a lost message): each end sees 1006, its peer a moment later. */
  cut(code = 1006): void {
    this.close(code, '');
  }

  /**
   * This end's process died: the OS closes its socket, so the peer sees the connection drop a moment
   * later; this end hears nothing more (its listeners are gone with the process).
   */
  processDied(): void {
    if (this.readyState === CLOSED) return;
    this.readyState = CLOSED;
    const peer = this.peer;
    if (peer) this.network.send(this.computer, [peer.own], 'connection reset', () => peer.closeHere(1006, ''), 0, true);
  }

  /** The life this end belongs to. */
  get own(): Owner {
    return this.owners[0]!;
  }

  open(): void {
    if (this.readyState !== CONNECTING) return;
    this.readyState = OPEN;
    this.emit('open');
  }

  closeHere(code: number, reason: string): void {
    if (this.readyState === CLOSED) return;
    this.readyState = CLOSED;
    this.emit('close', code, Buffer.from(reason));
  }

  asWebSocket(): WebSocket {
    return this as unknown as WebSocket;
  }
}
