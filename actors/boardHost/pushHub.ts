import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import type { PushFrame } from '../board/boardAnswers.ts';

/** Acks are small; anything larger is not an ack. */
const MAX_ACK_BYTES = 16 * 1024;

/**
 * The board's end of the push stream: one live socket per computer (a newer one replaces an older),
 * frames out, acks in. Which frames go where is decided by the board; this only carries them.
 */
export class PushHub {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: MAX_ACK_BYTES });
  private readonly sockets = new Map<string, WebSocket>();

  constructor(
    private readonly events: {
      connected(computerId: string): Promise<void>;
      disconnected(computerId: string): Promise<void>;
      ack?(computerId: string, ack: unknown): void;
    },
  ) {}

  /** Takes over an upgrade whose computer has already been authenticated. */
  accept(request: IncomingMessage, socket: Duplex, head: Buffer, computerId: string): void {
    this.wss.handleUpgrade(request, socket, head, (ws) => {
      const older = this.sockets.get(computerId);
      this.sockets.set(computerId, ws);
      older?.close(4000, 'replaced by a newer connection');
      ws.on('message', (data) => {
        let ack: unknown;
        try {
          ack = JSON.parse(data.toString());
        } catch {
          return;
        }
        this.events.ack?.(computerId, ack);
      });
      ws.on('error', () => {});
      ws.on('close', () => {
        if (this.sockets.get(computerId) !== ws) return;
        this.sockets.delete(computerId);
        void this.events.disconnected(computerId).catch(() => {});
      });
      void this.events.connected(computerId).catch(() => ws.close(1011, 'the board could not record the connection'));
    });
  }

  send(frames: readonly PushFrame[]): void {
    for (const { computerId, frame } of frames) {
      const ws = this.sockets.get(computerId);
      if (ws?.readyState === WebSocket.OPEN) ws.send(JSON.stringify(frame));
    }
  }

  connectedComputers(): string[] {
    return [...this.sockets.keys()];
  }

  close(): void {
    for (const ws of this.sockets.values()) ws.terminate();
    this.sockets.clear();
    this.wss.close();
  }
}
