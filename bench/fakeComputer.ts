/**
 * A stand-in computer for the dispatch bench: it speaks the real push stream (WebSocket, acks) and
 * claims and completes over HTTP, as a daemon does, but keeps its queue in memory and runs no agent
 * (a turn is `agentMs` of waiting). Cheap enough that hundreds share one process with the load.
 */
import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { INCARNATION_HEADER } from '../events/wire/incarnation.ts';
import type { HttpCall } from './httpCall.ts';

interface Queued {
  readonly runId: string;
  readonly lane: string;
}

export interface FakeComputerOptions {
  readonly id: string;
  readonly token: string;
  readonly url: string;
  readonly call: HttpCall;
  readonly slots: number;
  /** How long a turn takes once claimed. */
  readonly agentMs: number;
  /** A claim granted (its first answer 200): when, for the submit→claimed latency. */
  readonly claimed: (runId: string) => void;
  /** A run completed (the board answered 200). */
  readonly completed: (runId: string) => void;
}

export class FakeComputer {
  private ws: WebSocket | null = null;
  private readonly incarnation = randomUUID();
  private readonly queue: Queued[] = [];
  /** Told conversation_busy: waits for the board to resend its frame. */
  private readonly parked = new Map<string, Queued>();
  private readonly lanesRunning = new Set<string>();
  private running = 0;
  private paused = false;
  /** Claims the board refused, by code. */
  readonly refusals: Record<string, number> = {};

  constructor(private readonly options: FakeComputerOptions) {}

  /** Connects its push stream; resolves once open. `paused`: acks frames but claims nothing until `resume`. */
  connect(paused = false): Promise<void> {
    this.paused = paused;
    const { url, id, token } = this.options;
    const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/v1/computers/${id}/stream`, {
      headers: { authorization: `Bearer ${token}`, [INCARNATION_HEADER]: this.incarnation },
    });
    this.ws = ws;
    ws.on('message', (data) => this.frame(data.toString()));
    ws.on('error', () => {
      // followed by its close
    });
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('close', (code) => reject(new Error(`computer ${id}: stream closed (${code}) before it opened`)));
    });
  }

  resume(): void {
    this.paused = false;
    this.pump();
  }

  close(): void {
    this.ws?.terminate();
  }

  private frame(text: string): void {
    const frame = JSON.parse(text) as { id: string; kind: string; data: { run_id: string; lane?: string } };
    const runId = frame.data.run_id;
    this.ws!.send(JSON.stringify({ ack: frame.id, status: frame.kind === 'run.requested' ? 202 : 200 }));
    if (frame.kind === 'run.requested') {
      const parked = this.parked.get(runId);
      if (parked) {
        this.parked.delete(runId);
        this.queue.push(parked);
      } else if (!this.queue.some((q) => q.runId === runId)) this.queue.push({ runId, lane: frame.data.lane! });
      this.pump();
    } else if (frame.kind === 'run.withdrawn' || frame.kind === 'run.cancelled') {
      const i = this.queue.findIndex((q) => q.runId === runId);
      if (i !== -1) this.queue.splice(i, 1);
      this.parked.delete(runId);
    }
  }

  private pump(): void {
    while (!this.paused && this.running < this.options.slots) {
      const i = this.queue.findIndex((q) => !this.lanesRunning.has(q.lane));
      if (i === -1) return;
      const [run] = this.queue.splice(i, 1);
      this.running++;
      this.lanesRunning.add(run!.lane);
      void this.claim(run!).finally(() => {
        this.running--;
        this.lanesRunning.delete(run!.lane);
        this.pump();
      });
    }
  }

  private async claim(run: Queued): Promise<void> {
    const { url, id, token, call } = this.options;
    const answer = await call(`${url}/v1/computers/${id}/runs/${run.runId}/claim`, 'POST', {
      authorization: `Bearer ${token}`,
      [INCARNATION_HEADER]: this.incarnation,
    });
    if (answer.status !== 200) {
      const code = (JSON.parse(answer.text) as { detail?: { error?: string } }).detail?.error ?? String(answer.status);
      this.refusals[code] = (this.refusals[code] ?? 0) + 1;
      if (code === 'conversation_busy') this.parked.set(run.runId, run);
      return;
    }
    this.options.claimed(run.runId);
    const { run_token } = JSON.parse(answer.text) as { run_token: string };
    if (this.options.agentMs > 0) await new Promise((resolve) => setTimeout(resolve, this.options.agentMs));
    const done = await call(
      `${url}/v1/runs/${run.runId}/complete`,
      'POST',
      { authorization: `Bearer ${run_token}`, 'content-type': 'application/json' },
      JSON.stringify({ ok: true }),
    );
    if (done.status !== 200) throw new Error(`computer ${id}: completing ${run.runId} answered ${done.status}: ${done.text}`);
    this.options.completed(run.runId);
  }
}
