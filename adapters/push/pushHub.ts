import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import * as z from 'zod';
import type { PushFrame } from '../../actors/board/boardAnswers.ts';
import { messageOf } from '../../events/thrown.ts';
import { CONNECTED_ELSEWHERE } from '../../events/wire/incarnation.ts';
import type { RepoAnnouncement } from '../../events/workspace.ts';
import type { Clock } from '../../runtime/actors/clock.ts';
import { type FailureLog, stderrLog } from '../../runtime/actors/untilRecorded.ts';

/** Acks are small; anything larger is not an ack. */
const MAX_ACK_BYTES = 16 * 1024;
/** How often a live socket is pinged. */
export const PING_MS = 10_000;
/**
 * Pings in a row a socket may leave unanswered before it is taken for gone: two, so that an event loop
 * held up past one interval (the pong waiting, unread, behind the timer) does not cut a live computer.
 */
const MAX_MISSED = 2;
/** Frames awaiting their ack, per socket: enough for any backlog, bounded against a computer that never acks. */
const MAX_UNACKED = 10_000;
/** A `run.requested` frame left without an ack this long is taken as passed: its run goes to the next computer (docs/rules.md#dispatch). */
export const OFFER_ACK_MS = 5_000;
/** How often the frames awaiting their ack are looked at, while there are any (an idle board sleeps). */
const ACK_ROUND_MS = 1_000;

/** An ack (`{ack, status, reason}`): the id of the frame it answers; only a 503 `draining` is acted on. */
const Ack = z.object({ ack: z.string(), status: z.unknown(), reason: z.unknown() });

interface Live {
  readonly ws: WebSocket;
  /** The life of the daemon on this socket (`Runledger-Incarnation`), null from an older computer. */
  readonly incarnation: string | null;
  /** The repositories it announced on the upgrade (`Runledger-Repos`), undefined from an older computer: said again with each connect. */
  readonly repos: RepoAnnouncement | undefined;
  /** Its last sign of life: the connect, a pong, an ack. */
  lastSeenAt: number;
  /** Pings sent since its last sign of life. */
  missed: number;
  /** Frame id → run id and when it was sent, of the `run.requested` frames not acked yet, oldest first: what an ack passes. */
  readonly unacked: Map<string, { readonly runId: string; readonly sentAt: number }>;
  /**
   * Its connection is recorded (`admit`): until then no frame goes down it, for the log may yet say its
   * computer is connected to another board, and a twin must not be offered that computer's runs.
   */
  admitted: boolean;
}

export interface PushHubEvents {
  /**
   * `incarnation`: the life on the socket; `repos`: the repositories it announced. Resolves `false` when
   * the log has the computer's stream on another board: the socket is refused.
   */
  connected(computerId: string, incarnation: string | null, repos: RepoAnnouncement | undefined): Promise<boolean>;
  disconnected(computerId: string, lastSeenAt: number): Promise<void>;
  /**
   * A `run.requested` frame the computer passed: acked 503 `draining`, acked 200 or 400 (`refused`), or not
   * acked within OFFER_ACK_MS (`unanswered`). A 202 changes nothing on the board: the computer queued it.
   */
  declined(computerId: string, runId: string, reason: 'draining' | 'refused' | 'unanswered'): Promise<void>;
  /** A connection refused because the computer is connected elsewhere. */
  refused(computerId: string, incarnation: string | null): void;
}

/**
 * The board's end of the push stream: one live socket per computer id, frames out, acks in. A second
 * daemon joining as a connected computer is refused (4409) rather than let the two replace each other;
 * only the same life reconnecting (its old socket half-open) replaces its socket. Live sockets are
 * pinged, and one that stops answering is closed, so a vanished machine does not hold its id long.
 * Which frames go where is decided by the board; this only carries them.
 */
export class PushHub {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: MAX_ACK_BYTES });
  private readonly sockets = new Map<string, Live>();
  private stopPinger: () => void;
  /** Cancels the next look at the frames awaiting their ack; null while none awaits one. */
  private stopAckRounds: (() => void) | null = null;
  /** Per computer id, the last of its inputs handed to the board: the next one waits for it. */
  private readonly recording = new Map<string, Promise<void>>();
  /** The computers whose connect is queued to be recorded again (connectAgain). */
  private readonly again = new Set<string>();

  constructor(
    private readonly events: PushHubEvents,
    private readonly clock: Clock,
    /** The daemon's log: an input of a socket's life the board could not record, and went on without. */
    private readonly log: FailureLog = stderrLog,
  ) {
    // Re-armed after each round, on the clock: a test drives the pings with a FakeClock.
    const round = () => {
      this.ping();
      this.stopPinger = clock.after(PING_MS, round);
    };
    this.stopPinger = clock.after(PING_MS, round);
  }

  /** Takes over an upgrade whose computer has already been authenticated. */
  accept(request: IncomingMessage, socket: Duplex, head: Buffer, computerId: string, incarnation: string | null, repos?: RepoAnnouncement): void {
    this.wss.handleUpgrade(request, socket, head, (ws) => this.attach(computerId, incarnation, ws, repos));
  }

  /** A socket of an authenticated computer, upgraded (or, in sim/, a simulated link that behaves as one). */
  attach(computerId: string, incarnation: string | null, ws: WebSocket, repos?: RepoAnnouncement): void {
    const older = this.sockets.get(computerId);
    const live = older !== undefined && older.ws.readyState === WebSocket.OPEN;
    if (live && (incarnation === null || older.incarnation !== incarnation)) {
      // A socket error (the peer reset) is followed by its close: nothing is left to do about it.
      ws.on('error', () => {
        // followed by its close
      });
      ws.close(CONNECTED_ELSEWHERE.code, CONNECTED_ELSEWHERE.reason);
      this.events.refused(computerId, incarnation);
      return;
    }
    const entry: Live = { ws, incarnation, repos, lastSeenAt: this.clock.now(), missed: 0, unacked: new Map(), admitted: false };
    this.sockets.set(computerId, entry);
    // The same life again: its old socket is half-open, and its close must not take the computer offline.
    older?.ws.terminate();
    ws.on('pong', () => this.heard(entry));
    ws.on('message', (data) => {
      this.heard(entry);
      this.acked(computerId, entry, data.toString());
    });
    // A socket error (the peer reset) is followed by its close, handled below.
    ws.on('error', () => {
      // followed by its close
    });
    ws.on('close', () => {
      if (this.sockets.get(computerId) !== entry) return;
      this.sockets.delete(computerId);
      void this.inOrder(computerId, () => this.events.disconnected(computerId, entry.lastSeenAt)).catch(
        this.unrecorded(`the disconnect of computer ${computerId}`),
      );
    });
    void this.inOrder(computerId, () => this.events.connected(computerId, incarnation, repos)).then(
      (taken) => {
        if (taken) return;
        // Another board holds its stream, as the log says: refused as a twin on this board would be.
        ws.close(CONNECTED_ELSEWHERE.code, CONNECTED_ELSEWHERE.reason);
        this.events.refused(computerId, incarnation);
      },
      (error: unknown) => {
        this.unrecorded(`the connect of computer ${computerId}`)(error);
        ws.close(1011, 'the board could not record the connection');
      },
    );
  }

  /**
   * The log has `computerId` connected to another board now. The same life moved there (its socket here
   * is half-open): it is dropped. Another life: the log's word stands, and this one is refused (4409).
   */
  connectedElsewhere(computerId: string, incarnation: string | null): void {
    const entry = this.sockets.get(computerId);
    if (entry === undefined) return;
    if (incarnation !== null && entry.incarnation === incarnation) {
      entry.ws.terminate();
      return;
    }
    entry.ws.close(CONNECTED_ELSEWHERE.code, CONNECTED_ELSEWHERE.reason);
    this.events.refused(computerId, entry.incarnation);
  }

  /** The log has `computerId` connected through this board: frames go down its socket from now on. */
  admit(computerId: string): void {
    const entry = this.sockets.get(computerId);
    if (entry !== undefined) entry.admitted = true;
  }

  /**
   * The log no longer has `computerId` connected though this hub holds its stream (another board's orphan
   * round took this board for dead while its writes failed): its connect is handed to the board again, in
   * the order of the computer's inputs, unless by then the stream closed or was replaced, stopped
   * answering its pings, or `stillLost` (read at that turn) says the log has it connected again. One at a
   * time per computer; one that fails is left to the next call (this board's next lease renewal).
   */
  connectAgain(computerId: string, stillLost: () => Promise<boolean>): void {
    const entry = this.sockets.get(computerId);
    if (entry === undefined || this.again.has(computerId)) return;
    this.again.add(computerId);
    void this.inOrder(computerId, async () => {
      this.again.delete(computerId);
      const live = this.sockets.get(computerId) === entry && entry.ws.readyState === WebSocket.OPEN && entry.missed === 0;
      if (live && (await stillLost()) && !(await this.events.connected(computerId, entry.incarnation, entry.repos))) {
        entry.ws.close(CONNECTED_ELSEWHERE.code, CONNECTED_ELSEWHERE.reason);
        this.events.refused(computerId, entry.incarnation);
      }
    }).catch(this.unrecorded(`the connect of computer ${computerId} again`));
  }

  /** The computers whose push streams this board holds. */
  computers(): string[] {
    return [...this.sockets.keys()];
  }

  /** Whether this board holds `computerId`'s push stream (its heartbeats and claims come here too). */
  holds(computerId: string): boolean {
    return this.sockets.has(computerId);
  }

  send(frames: readonly PushFrame[]): void {
    for (const { computerId, frame } of frames) {
      const entry = this.sockets.get(computerId);
      if (entry?.ws.readyState !== WebSocket.OPEN || !entry.admitted) continue;
      if (frame.kind === 'run.requested') {
        entry.unacked.set(frame.id, { runId: frame.data.run_id, sentAt: this.clock.now() });
        if (entry.unacked.size > MAX_UNACKED) entry.unacked.delete(entry.unacked.keys().next().value!);
        this.ackRounds();
      }
      entry.ws.send(JSON.stringify(frame));
    }
  }

  /** Looks at the frames awaiting their ack every ACK_ROUND_MS, for as long as any does. */
  private ackRounds(): void {
    if (this.stopAckRounds !== null) return;
    this.stopAckRounds = this.clock.after(ACK_ROUND_MS, () => {
      this.stopAckRounds = null;
      this.unanswered();
      if ([...this.sockets.values()].some((entry) => entry.unacked.size > 0)) this.ackRounds();
    });
  }

  close(): void {
    this.stopPinger();
    this.stopAckRounds?.();
    this.stopAckRounds = null;
    for (const { ws } of this.sockets.values()) ws.terminate();
    this.sockets.clear();
    this.wss.close();
  }

  private heard(entry: Live): void {
    entry.missed = 0;
    entry.lastSeenAt = this.clock.now();
  }

  /** An ack is read for what the board acts on (a frame passed); a malformed one was the computer's to refuse. */
  private acked(computerId: string, entry: Live, text: string): void {
    let ack: unknown;
    try {
      ack = JSON.parse(text);
    } catch {
      // Not JSON: not an ack of anything, and nothing the board acts on (the computer's side logs its own).
      return;
    }
    const read = Ack.safeParse(ack);
    if (!read.success) return;
    const { ack: id, status, reason } = read.data;
    const sent = entry.unacked.get(id);
    entry.unacked.delete(id);
    if (sent === undefined) return;
    if (status === 503 && reason === 'draining') this.passed(computerId, sent.runId, 'draining');
    else if (status === 200 || status === 400) this.passed(computerId, sent.runId, 'refused');
  }

  /** Each socket's `run.requested` frames sent OFFER_ACK_MS ago or more and not acked: passed, each run to the next computer. */
  private unanswered(): void {
    const due = this.clock.now() - OFFER_ACK_MS;
    for (const [computerId, entry] of this.sockets) {
      for (const [id, sent] of entry.unacked) {
        if (sent.sentAt > due) break;
        entry.unacked.delete(id);
        this.passed(computerId, sent.runId, 'unanswered');
      }
    }
  }

  private passed(computerId: string, runId: string, reason: 'draining' | 'refused' | 'unanswered'): void {
    void this.inOrder(computerId, () => this.events.declined(computerId, runId, reason)).catch(
      this.unrecorded(`the decline of run ${runId} by computer ${computerId}`),
    );
  }

  /** The catch of an input of a socket's life: one line naming it, and the hub goes on. */
  private unrecorded(what: string): (error: unknown) => void {
    return (error) => this.log(`push hub: ${what} could not be recorded (${messageOf(error)}); going on without it`);
  }

  /**
   * Hands `input` to the board once the computer's previous input is recorded. Each is retried until
   * the log takes it, so without this a disconnect retried through an outage could be recorded after
   * the reconnect that followed it, and mark a live computer offline for good.
   */
  private inOrder<T>(computerId: string, input: () => Promise<T>): Promise<T> {
    const next = (this.recording.get(computerId) ?? Promise.resolve()).then(input);
    // A failure is this input's caller's to handle: the next input runs after it either way.
    const tail = next.then(
      () => undefined,
      () => {
        // this input's caller handles its failure
      },
    );
    this.recording.set(computerId, tail);
    void tail.then(() => {
      if (this.recording.get(computerId) === tail) this.recording.delete(computerId);
    });
    return next;
  }

  /** Each live socket is pinged; one that answered none of the last MAX_MISSED pings is gone. */
  private ping(): void {
    for (const entry of this.sockets.values()) {
      if (entry.ws.readyState !== WebSocket.OPEN) continue;
      if (entry.missed >= MAX_MISSED) {
        entry.ws.terminate();
        continue;
      }
      entry.missed++;
      entry.ws.ping();
    }
  }
}
