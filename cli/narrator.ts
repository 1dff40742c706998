import pino from 'pino';
import type { Subscription } from 'rxjs';
import type { DomainEvent } from '../events/catalog.ts';
import { parseStream } from '../events/envelope.ts';
import type { EventStore } from '../events/store/eventStore.ts';
import { describeEvent } from '../projections/audit/describeEvent.ts';

/** The decisions worth a line while the daemon runs; everything else is in `runledger audit`. */
const TOLD = new Set([
  'run.queued',
  'run.claimed',
  'run.skipped',
  'run.withdrawn',
  'run.completion.requested',
  'run.completion.retrying',
  'run.settled',
  'run.cancel.decided',
  'run.resolved.elsewhere',
  'lane.session.remembered',
  'board.run.queued',
  'board.run.resolved',
  'board.run.finished',
  'board.request.rejected',
  'frame.refused',
  'session.closed',
  'session.close.deferred',
  'session.close.incident',
  'hook.exited',
  'hook.interrupted',
  'adoption.adopted',
  'adoption.failed',
  'inbox.waiting',
  'inbox.withheld',
]);

function told(event: DomainEvent): boolean {
  // A parked run is told once, on its first wait (SPEC: logged on the first wait only).
  if (event.type === 'run.parked') return event.data.logged;
  return TOLD.has(event.type);
}

function subject(event: DomainEvent): string {
  const data = event.data as { runId?: unknown };
  return typeof data.runId === 'string' ? `run ${data.runId.slice(0, 8)}` : event.stream;
}

/**
 * Tells what the daemon decides as it happens, from the log itself (the same sentences as the
 * audit): human lines on stdout, or JSON lines through pino with `json`.
 */
export function narrate(store: EventStore, after: number, options: { json: boolean }): Subscription {
  const out = batchedLines();
  const logger = options.json ? pino({ base: { pid: process.pid } }, out) : null;
  const subscription = store.subscribe(after).subscribe({
    next(event) {
      if (!told(event)) return;
      const sentence = describeEvent(event);
      if (logger) {
        logger.info({ seq: event.seq, stream: event.stream, type: event.type, at: event.at }, sentence);
        return;
      }
      const time = new Date(event.at).toISOString().slice(11, 19);
      // Which computer decided it, for a computer's streams: with two on one board, each says its own.
      const owner = parseStream(event.stream).owner;
      out.write(`${time} ${subject(event).padEnd(12)} ${owner ? `${owner}: ` : ''}${sentence}\n`);
    },
    error(error) {
      process.stderr.write(`runledger: the log could not be read: ${(error as Error).message}\n`);
    },
  });
  subscription.add(() => out.end());
  return subscription;
}

/** How long a told line may wait for others to share its write. */
const BATCH_MS = 50;
const BATCH_BYTES = 16 * 1024;

/**
 * Lines to stdout, gathered for up to 50 ms and written together: a busy daemon tells several
 * decisions a run, and a write each (a hand-off to the thread pool and a syscall) cost more than
 * telling them. Written asynchronously (pino's sonic-boom, which also flushes on exit): stdout on a
 * pipe is written synchronously, so a reader that falls behind (a busy terminal, a log shipper)
 * would otherwise stall the daemon's event loop.
 */
function batchedLines(): { write(line: string): void; end(): void } {
  const out = pino.destination({ dest: 1, sync: false });
  let pending = '';
  let timer: NodeJS.Timeout | null = null;
  const flush = (): void => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (pending) out.write(pending);
    pending = '';
  };
  return {
    write(line) {
      pending += line;
      if (pending.length >= BATCH_BYTES) flush();
      else timer ??= setTimeout(flush, BATCH_MS).unref();
    },
    end() {
      flush();
      try {
        out.flushSync();
      } catch {
        // Closed under us (the process is ending): the lines are in the log, which is what counts.
      }
    },
  };
}
