import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { budgetWords, remainingMs } from '../../actors/run/budget.ts';
import type { RunInput } from '../../actors/run/decideRun.ts';
import { agentKindOf, turnCommand } from '../../actors/run/resume.ts';
import { INTERRUPTED_BY_RESTART } from '../../actors/run/runState.ts';
import { type AgentHandle, startAgent } from '../../adapters/agent/agentProcess.ts';
import { type AgentKind, readerFor } from '../../adapters/agent/outputReaders.ts';
import { findStrays, stopStrays } from '../../adapters/agent/strays.ts';
import { NO_REPOSITORIES, type Repositories } from '../../adapters/git/repositories.ts';
import { readTurnChanges } from '../../adapters/git/turnChanges.ts';
import { prepareWorktree, pushBranch, worktreePath } from '../../adapters/git/worktrees.ts';
import type { BoardAnswer } from '../../adapters/http/boardClient.ts';
import type { DomainEvent } from '../../events/catalog.ts';
import { parseStream } from '../../events/envelope.ts';
import { messageOf } from '../../events/thrown.ts';
import { type ChangesBody, changesToWire } from '../../events/wire/changes.ts';
import { type UsageBody, usageToWire } from '../../events/wire/usage.ts';
import type { TurnChanges } from '../../events/workspace.ts';
import type { Clock } from '../../runtime/actors/clock.ts';
import { type EffectConsumer, type ImplicitTakes, RUN_EFFECTS_AT_ONCE } from '../../runtime/actors/effectConsumer.ts';
import { groupAlive, signalGroup } from '../../runtime/actors/processes.ts';
import { type FailureLog, unrecorded } from '../../runtime/actors/untilRecorded.ts';
import type { EventStore } from '../../runtime/store/eventStore.ts';
import { shareSkills } from './skills.ts';
import { markHanded, noticePrefix, unreadNotices } from './unreadNotices.ts';

export interface RunEffectsContext {
  readonly computer: string;
  readonly store: EventStore;
  readonly clock: Clock;
  /** The agent command line (`--exec`) and the reader its output needs. */
  readonly exec: string;
  readonly kind: AgentKind;
  readonly workspaceRoot: string;
  /** The repositories its lanes work in (`--repo`), each lane in a worktree of its own. */
  readonly repos?: Repositories;
  /** `--push`: a lane's branch goes to `origin` after each turn that changed it, and is fetched from there first. */
  readonly push?: boolean;
  readonly killGraceMs: number;
  /** Whether the prompt opens with the budget sentence (`--budget-note`, on unless turned off). */
  readonly budgetNote: boolean;
  /** Live processes of this daemon, by run. */
  readonly handles: Map<string, AgentHandle>;
  readonly input: (runId: string, input: RunInput) => Promise<unknown>;
  /** The run's token for its calls to the board; `gone` once the board holds the run as terminal (410). */
  readonly runToken: (runId: string) => Promise<RunToken>;
  /** The run's phase as its actor last decided, or null for a run this daemon does not hold. */
  readonly phaseOf: (runId: string) => string | null;
  /** The prompt its claim carried, while the daemon that claimed it still runs. */
  readonly promptOf: (runId: string) => string | null;
  /** Where an input sent without waiting is told when it could not be recorded. */
  readonly log: FailureLog;
  /** The agent's progress line changed (its latest tool call or message): heartbeated, never recorded. */
  readonly progress?: (runId: string, line: string) => void;
  readonly board: {
    reply(runId: string, token: string, text: string): Promise<BoardAnswer>;
    complete(
      runId: string,
      token: string,
      result: { ok: boolean; error?: string },
      usage?: UsageBody | null,
      changes?: ChangesBody | null,
    ): Promise<BoardAnswer>;
  };
  /** Test seam (the simulator's agent processes): how an agent is started; the launcher's by default. */
  readonly startAgent?: typeof startAgent;
}

const ownRun = (computer: string, event: DomainEvent) => {
  const { owner, kind, id } = parseStream(event.stream);
  return owner === computer && kind === 'run' ? id : null;
};

/**
 * Takes implicit in the run's own decisions (one process holds a computer's log), settled by the first of
 * `answers` the run's stream records after the effect; an effect no answer settles is recorded by the outbox.
 */
function settledInRun(computer: string, answers: readonly DomainEvent['type'][]): ImplicitTakes {
  return {
    key: (effect) => effect.stream,
    settles: (event) => (answers.includes(event.type) && ownRun(computer, event) ? event.stream : null),
  };
}

/**
 * Spawning is done at most once: a crash between taking it and recording the process leaves it
 * interrupted, and the restart completes the run as failed rather than running it a second time.
 */
/** How agents are run, as a daemon or `runledger run` was told: one copy of the defaults for both. */
export function agentSettingsOf(options: { readonly exec: string; readonly killGraceMs?: number; readonly budgetNote?: boolean }) {
  return {
    exec: options.exec,
    kind: agentKindOf(options.exec),
    killGraceMs: options.killGraceMs ?? 5_000,
    budgetNote: options.budgetNote ?? true,
  } satisfies Pick<RunEffectsContext, 'exec' | 'kind' | 'killGraceMs' | 'budgetNote'>;
}

export function spawnConsumer(ctx: RunEffectsContext): EffectConsumer<DomainEvent> {
  return {
    name: `spawns-${ctx.computer}`,
    delivery: 'at-most-once',
    concurrency: RUN_EFFECTS_AT_ONCE,
    // A spawn's end is its process's start, or its exit (one that could not start).
    implicit: settledInRun(ctx.computer, ['run.process.began', 'run.process.exited']),
    effectOf: (event) => (event.type === 'run.execution.requested' && ownRun(ctx.computer, event) ? event : null),
    async perform(event) {
      if (event.type !== 'run.execution.requested') return { ok: false, detail: 'not a spawn' };
      const { runId, lane, deadlineAt, resume } = event.data;
      // Taken after a restart that already settled the run (interrupted), or after a cancel: not run.
      if (ctx.phaseOf(runId) !== 'requested') return { ok: false, detail: `not started: the run is ${ctx.phaseOf(runId) ?? 'settled'}` };
      const stream = `${ctx.computer}/run:${runId}`;
      const prompt = ctx.promptOf(runId) ?? (await claimedPrompt(ctx.store, `${ctx.computer}/lane:${lane}`, runId));
      const at = () => ctx.clock.now();
      if (prompt === null) {
        await ctx.input(runId, exitedInput(stream, runId, at(), 'failed_to_start', 'the claim answer carried no prompt'));
        return { answered: 'no prompt' };
      }
      const worktree = event.data.workspace;
      const workspace = worktree?.path ?? join(ctx.workspaceRoot, lane);
      if (!worktree) mkdirSync(workspace, { recursive: true });
      const turn = turnCommand(ctx.exec, ctx.kind, resume);
      // Notices filed into the session's inbox since its last turn go ahead of the prompt (docs/rules.md#sessions-hooks-notifications).
      const unread = turn.resuming ? await unreadNotices(ctx.store, turn.resuming) : { notices: [], through: 0 };
      const budget = remainingMs(deadlineAt, event.at);
      const reader = readerFor(ctx.kind);
      reader.onProgress((line) => ctx.progress?.(runId, line));
      const handle = await (ctx.startAgent ?? startAgent)({
        command: turn.command,
        cwd: workspace,
        prompt: `${ctx.budgetNote ? `${budgetWords(budget)}\n\n` : ''}${noticePrefix(unread.notices)}${prompt}`,
        env: turn.env,
        reader,
        clock: ctx.clock,
        deadlineAt,
        killGraceMs: ctx.killGraceMs,
      });
      // Its exit is recorded whatever happens to the inputs below: a run whose exit was never told would
      // wait for ever. It follows its `run.process.began` (recorded or not), so the run reads them in order.
      let began: Promise<unknown> = Promise.resolve();
      if (handle.pid !== null) {
        ctx.handles.set(runId, handle);
        const beganInput: RunInput = {
          stream,
          type: 'run.process.began',
          data: { runId, pid: handle.pid, resuming: turn.resuming, ...(handle.mark ? { mark: handle.mark } : {}) },
          at: at(),
        };
        began = ctx.input(runId, beganInput).catch(unrecorded(ctx.log, beganInput));
      }
      void Promise.all([handle.result, began]).then(async ([result]) => {
        ctx.handles.delete(runId);
        // What the turn changed, as git says it now the process is over: recorded with its exit.
        const changes = worktree ? await changesOf(ctx, worktree) : {};
        const exited: RunInput = {
          stream,
          type: 'run.process.exited',
          data: {
            runId,
            outcome: result.error !== null && result.exitCode === null ? 'failed_to_start' : result.outcome,
            exitCode: result.exitCode,
            signal: result.signal,
            reply: result.reply.ok ? result.reply.text : null,
            tail: result.tail.slice(-16 * 1024),
            stderrTail: (result.error ?? result.stderrTail).slice(-16 * 1024),
            ...(result.agentError === null ? {} : { agentError: result.agentError.slice(0, 4 * 1024) }),
            ...(result.usage === null ? {} : { usage: result.usage }),
            ...(result.usageLimit === null ? {} : { usageLimit: result.usageLimit }),
            ...(result.strays.length === 0 ? {} : { strays: result.strays.slice(0, 20).map(({ pid, command }) => ({ pid, command })) }),
            ...changes,
          },
          at: at(),
        };
        await ctx.input(runId, exited).catch(unrecorded(ctx.log, exited));
      });
      if (handle.pid !== null) {
        await began;
        // Handed once the agent has them; a crash (or a failure here) hands them again next turn, never loses them.
        if (turn.resuming && unread.through > 0) {
          await markHanded(ctx.store, turn.resuming, unread.through, runId, at()).catch((error: unknown) =>
            ctx.log(
              `run ${runId}: the notices handed to session ${turn.resuming} could not be recorded (${messageOf(error)}); they are handed again next turn`,
            ),
          );
        }
        handle.onSessionId((sessionId) => {
          const announced: RunInput = { stream, type: 'run.session.announced', data: { runId, sessionId }, at: at() };
          void ctx.input(runId, announced).catch(unrecorded(ctx.log, announced));
        });
      }
      // Its start is recorded (or, for a command that could not start, its exit is on its way): that input settles it.
      return { answered: handle.pid === null ? 'the command could not start' : `pid ${handle.pid}` };
    },
  };
}

/**
 * A run in a repository has its lane's worktree made (or found, or repaired) before its spawn is
 * decided, and its HEAD read: the answer is the run's input, recorded before anything is decided from
 * it. Doing it again is harmless (a ready worktree is found as it is), so a crash between the two
 * does it again at the next start: at least once.
 */
export function workspaceConsumer(ctx: RunEffectsContext): EffectConsumer<DomainEvent> {
  return {
    name: `workspaces-${ctx.computer}`,
    delivery: 'at-least-once',
    concurrency: RUN_EFFECTS_AT_ONCE,
    implicit: settledInRun(ctx.computer, ['run.workspace.prepared', 'run.workspace.failed']),
    effectOf: (event) => (event.type === 'run.workspace.requested' && ownRun(ctx.computer, event) ? event : null),
    async perform(event) {
      if (event.type !== 'run.workspace.requested') return { ok: false, detail: 'not a workspace' };
      const { runId, lane, repo: name, base } = event.data;
      if (ctx.phaseOf(runId) !== 'preparing') return { ok: false, detail: `not prepared: the run is ${ctx.phaseOf(runId) ?? 'settled'}` };
      const stream = `${ctx.computer}/run:${runId}`;
      const repos = ctx.repos ?? NO_REPOSITORIES;
      const repo = name === null ? undefined : repos.byName.get(name);
      const failed = async (error: string) => {
        await ctx.input(runId, { stream, type: 'run.workspace.failed', data: { runId, repo: name, error }, at: ctx.clock.now() });
        return { answered: error };
      };
      if (repo === undefined) {
        const known = [...repos.byName.keys()];
        const has = known.length ? `it has ${known.join(', ')}` : 'it was started without --repo';
        return failed(
          name === null
            ? `the run asks for base ${base ?? '?'} but names no repository, and computer ${ctx.computer} has no default one (${has}): submit with --repo NAME`
            : `computer ${ctx.computer} has no repository named ${name} (${has}): start its daemon with --repo ${name}=PATH, or submit with another --repo`,
        );
      }
      try {
        const path = worktreePath(ctx.workspaceRoot, repo.name, lane);
        const ready = await prepareWorktree(repo, { lane, path, ...(base === undefined ? {} : { base }), fromOrigin: ctx.push === true });
        // Before the turn is decided: the agent finds the lane's skills in the folder it runs in.
        const skills = await shareSkills(join(ctx.workspaceRoot, lane), path, ctx.kind);
        if (skills.theRepositorys.length)
          ctx.log(
            `run ${runId}: the repository ${repo.name} has skills named ${skills.theRepositorys.join(', ')} already: the lane's own of those names were not copied into its worktree`,
          );
        const { branch, head, made, from, repaired } = ready;
        const data = { runId, repo: repo.name, path, branch, head, made, ...(from ? { from } : {}), ...(repaired ? { repaired } : {}) };
        await ctx.input(runId, { stream, type: 'run.workspace.prepared', data, at: ctx.clock.now() });
        return { answered: `worktree ${path} at ${head.slice(0, 12)}` };
      } catch (error) {
        return failed(messageOf(error).slice(0, 4000));
      }
    },
  };
}

/**
 * `--push`: a turn that committed to its lane's branch has it pushed to `origin` before its completion
 * is decided. A push again is harmless (origin has it already), so a crash between the push and its
 * recorded answer pushes again at the next start: at least once.
 */
export function pushConsumer(ctx: RunEffectsContext): EffectConsumer<DomainEvent> {
  return {
    name: `pushes-${ctx.computer}`,
    delivery: 'at-least-once',
    concurrency: RUN_EFFECTS_AT_ONCE,
    implicit: settledInRun(ctx.computer, ['run.branch.pushed']),
    effectOf: (event) => (event.type === 'run.branch.push.requested' && ownRun(ctx.computer, event) ? event : null),
    async perform(event) {
      if (event.type !== 'run.branch.push.requested') return { ok: false, detail: 'not a push' };
      const { runId, repo: name, branch } = event.data;
      if (ctx.phaseOf(runId) !== 'pushing') return { ok: false, detail: `not pushed: the run is ${ctx.phaseOf(runId) ?? 'settled'}` };
      const repo = ctx.repos?.byName.get(name);
      const pushed = repo
        ? await pushBranch(repo, branch).catch((error: unknown) => ({ ok: false, detail: messageOf(error) }))
        : { ok: false, detail: `repository ${name} is no longer one of this daemon's (--repo)` };
      const data = { runId, ok: pushed.ok, detail: pushed.detail.slice(0, 4000) };
      await ctx.input(runId, { stream: `${ctx.computer}/run:${runId}`, type: 'run.branch.pushed', data, at: ctx.clock.now() });
      return { answered: pushed.detail };
    },
  };
}

/** The turn's changes for its exit, or why they could not be read (which fails the turn: its work would be off the record). */
async function changesOf(
  ctx: RunEffectsContext,
  worktree: { repo: string; path: string; head: string },
): Promise<{ changes: TurnChanges } | { changesError: string }> {
  const repo = ctx.repos?.byName.get(worktree.repo);
  if (!repo)
    return { changesError: `repository ${worktree.repo} is no longer one of this daemon's (--repo): what the turn changed could not be read` };
  try {
    return { changes: await readTurnChanges(repo, worktree.path, worktree.head) };
  } catch (error) {
    return { changesError: messageOf(error).slice(0, 4000) };
  }
}

/** A kill happens at most once; the process group gets TERM, then KILL after the grace. */
export function killConsumer(ctx: RunEffectsContext): EffectConsumer<DomainEvent> {
  return {
    name: `kills-${ctx.computer}`,
    delivery: 'at-most-once',
    concurrency: RUN_EFFECTS_AT_ONCE,
    // No input says a kill was sent (the exit may come before it, or never): its end is recorded by the outbox.
    implicit: settledInRun(ctx.computer, []),
    effectOf: (event) => (event.type === 'run.kill.requested' && ownRun(ctx.computer, event) ? event : null),
    async perform(event) {
      if (event.type !== 'run.kill.requested') return { ok: false };
      const { runId, pid, reason, mark } = event.data;
      const handle = ctx.handles.get(runId);
      // A pid is only signalled while its run is known to execute: a recycled pid is someone else's.
      // What a restart found alive is the exception: its run is already completing (decided in the same
      // step), and its group, or its agent's mark, was read alive just now and is read again here.
      const leftByEarlierDaemon = reason === INTERRUPTED_BY_RESTART && (groupAlive(pid) || (mark !== undefined && findStrays(mark, pid).length > 0));
      if (!handle && ctx.phaseOf(runId) !== 'executing' && !leftByEarlierDaemon)
        return { ok: false, detail: 'not killed: the run no longer executes' };
      if (handle) {
        if (reason === 'cancelled_by_user') handle.cancel(reason);
        else handle.kill();
        return { ok: true, detail: `stopping process group ${pid}` };
      }
      if (mark !== undefined) {
        // Left by an earlier daemon, with its mark: its group and what escaped it, as a turn's end stops them.
        const stopped = await stopStrays(mark, pid, 0, ctx.killGraceMs);
        return {
          ok: true,
          detail: `stopped what the last life's agent left running: ${stopped.map(({ pid, command }) => `${pid} (${command ?? '?'})`).join(', ') || 'nothing, gone meanwhile'}`,
        };
      }
      // Left by an earlier daemon of a version that recorded no mark: its group alone.
      signalGroup(pid, 'SIGTERM');
      ctx.clock.after(ctx.killGraceMs, () => {
        if (groupAlive(pid)) signalGroup(pid, 'SIGKILL');
      });
      return { ok: true, detail: `signalled process group ${pid}` };
    },
  };
}

/** A run's token, `gone` when the board answered its claim again 410 (terminal there), null when it cannot be had now. */
export type RunToken = string | 'gone' | null;

/**
 * Completions are calls to the board, idempotent on run_id: at least once. The reply goes first, so a
 * completed run's reply is never missing.
 */
export function completionConsumer(ctx: RunEffectsContext): EffectConsumer<DomainEvent> {
  return {
    name: `completions-${ctx.computer}`,
    delivery: 'at-least-once',
    concurrency: RUN_EFFECTS_AT_ONCE,
    implicit: settledInRun(ctx.computer, ['run.completion.answered', 'run.reply.refused']),
    effectOf: (event) => (event.type === 'run.completion.requested' && ownRun(ctx.computer, event) ? event : null),
    async perform(event) {
      if (event.type !== 'run.completion.requested') return { ok: false };
      const { runId, result, reply } = event.data;
      const usage = usageToWire(event.data.usage);
      const changes = event.data.changes ? changesToWire(event.data.changes) : null;
      const stream = `${ctx.computer}/run:${runId}`;
      const token = await ctx.runToken(runId);
      // Terminal on the board (a completion it took before a crash cut the answer): answered as the board would.
      let status = token === 'gone' ? 410 : 0;
      if (token !== null && token !== 'gone') {
        const replied = reply !== null && result.ok ? await ctx.board.reply(runId, token, reply) : { status: 200 };
        if (REPLY_REFUSED.has(replied.status)) {
          await ctx.input(runId, { stream, type: 'run.reply.refused', data: { runId, status: replied.status }, at: ctx.clock.now() });
          return { answered: `the reply was refused (${replied.status})` };
        }
        status = replied.status === 200 || replied.status === 409 ? await completeOnce(ctx, runId, token, result, usage, changes) : replied.status;
      }
      await ctx.input(runId, { stream, type: 'run.completion.answered', data: { runId, status }, at: ctx.clock.now() });
      return { answered: `answered ${status}` };
    },
  };
}

/**
 * The completion call. A board older than `usage` or `changes` refuses the field (422): the run is
 * then reported without them rather than retried into a pause, as its outcome matters more than its
 * cost or its summary (the diff stays in this computer's log either way).
 */
async function completeOnce(
  ctx: RunEffectsContext,
  runId: string,
  token: string,
  result: { ok: boolean; error?: string },
  usage: UsageBody | null,
  changes: ChangesBody | null,
): Promise<number> {
  const answer = await ctx.board.complete(runId, token, result, usage, changes);
  const refusedField = (field: string) => JSON.stringify(answer.body ?? '').includes(field);
  if (answer.status !== 422 || !((usage !== null && refusedField('usage')) || (changes !== null && refusedField('changes')))) return answer.status;
  return (await ctx.board.complete(runId, token, result)).status;
}

/** Answers that refuse the reply's content: sending it again cannot help (a conflict, 409, is terminal instead). */
const REPLY_REFUSED = new Set([400, 413, 422]);

/** The prompt the board gave with the claim, read back from the answer recorded in the lane's stream. */
export async function claimedPrompt(store: EventStore, laneStream: string, runId: string): Promise<string | null> {
  const events = await store.readStream(laneStream);
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i]!;
    if (event.type === 'claim.answered' && event.data.runId === runId && event.data.run) return event.data.run.prompt;
  }
  return null;
}

/** The life that claimed the run, from its last claim start in the lane's stream (none in older logs). */
export async function claimIncarnation(store: EventStore, laneStream: string, runId: string): Promise<string | undefined> {
  const events = await store.readStream(laneStream);
  const started = events.findLast((e) => e.type === 'run.claim.started' && e.data.runId === runId);
  return started?.type === 'run.claim.started' ? started.data.incarnation : undefined;
}

function exitedInput(stream: string, runId: string, at: number, outcome: 'failed_to_start', why: string): RunInput {
  return { stream, type: 'run.process.exited', data: { runId, outcome, exitCode: null, signal: null, reply: null, tail: '', stderrTail: why }, at };
}
