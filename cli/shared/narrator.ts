import type { Logger } from 'pino';
import type { Subscription } from 'rxjs';
import { type DomainEvent, type EventOf, eventRoles, type TypesWhere } from '../../events/catalog.ts';
import { parseStream } from '../../events/envelope.ts';
import { describeEvent } from '../../projections/audit/describeEvent.ts';
import type { EventStore } from '../../runtime/store/eventStore.ts';
import type { StdoutLines } from './stdoutLines.ts';

/**
 * The decisions worth a line while the daemon runs, as each type's table says (events/roles.ts);
 * everything else is in `runledger audit`.
 */
function told(event: DomainEvent): boolean {
  const told = eventRoles[event.type].told;
  // A parked run, or a login's usage limit, is told once, on its first wait, with the agent's words
  // for a limit (docs/rules.md#computer-behaviour: logged on the first wait only).
  if (told === 'when.logged') return (event as EventOf<TypesWhere<'told', 'when.logged'>>).data.logged;
  return told;
}

function subject(event: DomainEvent): string {
  const data = event.data as { runId?: unknown };
  return typeof data.runId === 'string' ? `run ${data.runId.slice(0, 8)}` : event.stream;
}

/**
 * The JSON lines of `--log-json`, through pino onto `out`. Loaded only then: pino is 136 KB of the ~2 MB
 * a daemon's start loads, for a flag most never give.
 */
export async function jsonLines(out: StdoutLines): Promise<Logger> {
  const { default: pino } = await import('pino');
  return pino({ base: { pid: process.pid } }, out);
}

/**
 * Tells what the daemon decides as it happens, from the log itself (the same sentences as the
 * audit): human lines on `out`, or JSON lines through `json` (jsonLines).
 */
export function narrate(store: EventStore, after: number, options: { json: Logger | null; out: StdoutLines }): Subscription {
  const { out, json: logger } = options;
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
  subscription.add(() => out.flush());
  return subscription;
}
