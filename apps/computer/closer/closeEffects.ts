import type { SessionDriver } from '../../../adapters/tmux/sessionDriver.ts';
import type { DomainEvent } from '../../../events/catalog.ts';
import { parseStream } from '../../../events/envelope.ts';
import type { EffectConsumer } from '../../../runtime/actors/effectConsumer.ts';
import type { EventStore } from '../../../runtime/store/eventStore.ts';
import type { SessionActors } from './sessionActors.ts';
import { launchKey, sessionKey, sessionStream } from './sessionStreams.ts';

export interface CloseEffectsContext {
  readonly store: EventStore;
  readonly actors: SessionActors;
  readonly driver: SessionDriver;
  readonly now: () => number;
}

const own = (computer: string, event: DomainEvent, kind: string) => {
  const stream = parseStream(event.stream);
  return stream.owner === computer && stream.kind === kind ? stream.id : null;
};

/**
 * The kill a reading decided, at most once: one cut by a crash is recorded as interrupted and never
 * run again (the next round reads the session afresh, once the claim that decided it lapsed). A kill
 * that is no longer the one its close waits on (a later attempt took over) is not run at all.
 */
export function sessionKillConsumer(ctx: CloseEffectsContext): EffectConsumer<DomainEvent> {
  const computer = ctx.actors.computer;
  return {
    name: `session-kills-${computer}`,
    delivery: 'at-most-once',
    effectOf: (event) => (event.type === 'session.kill.requested' && own(computer, event, 'session') ? event : null),
    async perform(event) {
      if (event.type !== 'session.kill.requested') return { ok: false, detail: 'not a kill' };
      const key = own(computer, event, 'session')!;
      const { sessionId, attempt, target } = event.data;
      const close = await ctx.actors.state(key);
      if (!close.open || close.killing?.attempt !== attempt)
        return { ok: false, detail: `not stopped: the close no longer waits on the kill of attempt ${attempt}` };
      const stopped = await ctx.driver.stop(target);
      await ctx.actors.step(key, (_, at) => ({
        stream: sessionStream(computer, key),
        type: 'session.kill.answered',
        data: { sessionId, attempt, ok: stopped.ok, detail: stopped.detail.slice(0, 1000) },
        at,
      }));
      return stopped;
    },
  };
}

/**
 * A settled run of this computer asks for the close of the session it ran in: recorded in the
 * session's stream as its durable intent. At least once: a repeat of the same run is ignored.
 */
export function sessionIntentConsumer(ctx: CloseEffectsContext): EffectConsumer<DomainEvent> {
  const computer = ctx.actors.computer;
  return {
    name: `session-intents-${computer}`,
    delivery: 'at-least-once',
    effectOf: (event) => (event.type === 'run.settled' && own(computer, event, 'run') ? event : null),
    // Most runs of a plain command ran in no session: nothing to take, nothing to record for them.
    needed: async (event) => (await sessionOfRun(ctx.store, event.stream, own(computer, event, 'run')!)) !== null,
    async perform(event) {
      const runId = own(computer, event, 'run')!;
      const ended = await sessionOfRun(ctx.store, event.stream, runId);
      if (ended === null) return { ok: true, detail: 'no session of it can be alive' };
      const step = await ctx.actors.step(ended.key, (_, at) => ({
        stream: sessionStream(computer, ended.key),
        type: 'session.run.ended',
        data: { sessionId: ended.sessionId, runId, lane: ended.lane, bound: ended.bound, launchedAt: ended.launchedAt, pid: ended.pid },
        at,
      }));
      return { ok: true, detail: step.input ? `close of session ${ended.sessionId} intended` : `session ${ended.sessionId}: asked already` };
    },
  };
}

export interface EndedSession {
  readonly key: string;
  readonly sessionId: string;
  readonly lane: string | null;
  readonly bound: boolean;
  readonly launchedAt: number | null;
  readonly pid: number | null;
}

/**
 * The session a settled run ran in, from its stream: the one it announced, else the one it resumed.
 * A run that never began a process ran in none. One that began and never announced nor resumed one
 * is a launch never bound to a session, which only matters while its process may still be alive
 * (its end was never seen); the process group is named only then, so a recycled pid is never read.
 */
export async function sessionOfRun(store: EventStore, stream: string, runId: string): Promise<EndedSession | null> {
  let lane: string | null = null;
  let began: { pid: number; resuming: string | null; at: number } | null = null;
  let announced: string | null = null;
  let exited = false;
  for (const event of await store.readStream(stream)) {
    // Its lane: from its hand-over (older logs, local turns), else from the request its queue's claim started.
    if (event.type === 'run.handed.over' || event.type === 'run.execution.requested') lane = event.data.lane;
    else if (event.type === 'run.process.began') {
      began = { pid: event.data.pid, resuming: event.data.resuming, at: event.at };
      exited = false;
    } else if (event.type === 'run.session.announced') announced = event.data.sessionId;
    else if (event.type === 'run.process.exited') exited = true;
  }
  if (began === null) return null;
  const pid = exited ? null : began.pid;
  const sessionId = announced ?? began.resuming;
  if (sessionId !== null) return { key: sessionKey(sessionId), sessionId, lane, bound: true, launchedAt: began.at, pid };
  if (pid === null) return null;
  return { key: launchKey(runId), sessionId: `launch-${runId}`, lane, bound: false, launchedAt: began.at, pid };
}
