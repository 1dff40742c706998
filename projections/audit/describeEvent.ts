import { wordBoardReason } from '../../events/boardReasons.ts';
import type { DomainEvent, EventData } from '../../events/catalog.ts';
import type { Usage } from '../../events/usage.ts';
import { describeChanges, MAX_DIFF_BYTES } from '../../events/workspace.ts';
import { usageWords } from '../usage.ts';

/**
 * One line a person can read for any event of the log: what `runledger audit` prints beside it.
 * Decisions say why (their `reason`, plus the numbers that make it concrete); inputs say what the
 * world told us. The switch is exhaustive: a new event type does not compile until it has a sentence.
 */
export function describeEvent(event: DomainEvent): string {
  return oneLine(sentence(event));
}

function sentence(event: DomainEvent): string {
  switch (event.type) {
    // The outbox.
    case 'outbox.taken':
      return `the outbox took ${plural(event.data.effects.length, 'effect')} (through seq ${event.data.through}${event.data.epoch === undefined ? '' : `, under the chores' lease epoch ${event.data.epoch}`})`;
    case 'outbox.performed':
      return `effect seq ${event.data.effect} ${event.data.ok ? 'performed' : 'failed'}${event.data.detail ? `: ${event.data.detail}` : ''}`;
    case 'outbox.interrupted':
      return `effect seq ${event.data.effect} was cut short and will not run again: ${event.data.detail}`;

    // The computer's queue: inputs.
    case 'computer.configured': {
      const logins = Object.entries(event.data.loginCapacity).map(([login, n]) => `${login} ${n}`);
      return `configured: ${plural(event.data.slots, 'slot')}${logins.length ? `, runs at once per login: ${logins.join(', ')}` : ''}`;
    }
    case 'computer.started':
      return `the daemon started (incarnation ${event.data.incarnation}, ${event.data.host} pid ${event.data.pid}): what its last life left unfinished ends`;
    case 'scheduler.held':
      return `${event.data.held ? 'the scheduler is held' : 'the scheduler is released'}: ${event.data.reason}`;
    case 'drain.started':
      return `draining, nothing new starts: ${event.data.reason}`;
    case 'frame.received': {
      const { kind, frameId, lane, computerId } = event.data;
      const where = [`frame ${frameId}`, lane ? `lane ${lane}` : '', computerId ? `for computer ${computerId}` : ''].filter(Boolean).join(', ');
      if (kind === 'run.requested') return `the board pushed the run (${where})`;
      if (kind === 'run.cancelled') return `the board announced its cancel (${where})`;
      return `the board sent a frame of kind "${kind}" (${where})`;
    }
    case 'frame.refused':
      return `a frame could not be read (${event.data.frameId === null ? 'no id' : `frame ${event.data.frameId}`}): ${event.data.reason}`;
    case 'claim.answered': {
      const { status, code } = event.data;
      if (status === 0) return 'the claim got no answer: network error';
      return `the board answered the claim: ${status}${code ? ` ${code}` : ''}`;
    }
    case 'timer.fired':
      return 'its wait is over: the timer fired';
    case 'run.start.failed':
      return `the run could not start: ${event.data.reason}`;
    case 'run.limit.reported':
      return `its agent stopped at the login's usage limit${event.data.resetAt === undefined ? '' : `, reset at ${clock(event.data.resetAt)}`}: “${event.data.words}”`;
    case 'login.limit.due':
      return `login ${event.data.login}'s usage limit is due to lift`;
    case 'run.execution.ended':
      return `the agent's process ended ${event.data.ok ? 'well' : `in failure${event.data.reason ? `: ${event.data.reason}` : ''}`}`;

    // The computer's queue: decisions.
    case 'frame.acknowledged':
      return `frame acknowledged ${event.data.status}: ${event.data.reason}`;
    case 'run.queued':
      return `queued in lane ${event.data.lane}${event.data.agentId ? ` for agent ${event.data.agentId}` : ''} (arrival ${event.data.arrival})`;
    case 'run.claim.started':
      return `claiming it from the board (attempt ${event.data.attempt})`;
    case 'run.claimed': {
      const { skills, start } = event.data;
      const held = event.data.heldUntil === undefined ? '' : `, held: its login is at its usage limit until ${clock(event.data.heldUntil)}`;
      return `claimed${skills.length ? `, with skills ${skills.join(', ')}` : ''}${start ? `: handed to its run (${startWords(start.budgetS, start.laneSession)})` : ''}${held}`;
    }
    case 'run.parked':
      return `${event.data.reason} (until ${clock(event.data.notBefore)}, wait ${event.data.busyWaits})`;
    case 'run.claim.retrying':
      return `${event.data.reason} (attempt ${event.data.claimAttempts + 1} at ${clock(event.data.notBefore)})`;
    case 'run.limit.waiting':
      return `${event.data.reason} (until ${clock(event.data.notBefore)}, limit ${event.data.strikes} in a row): “${event.data.words}”`;
    case 'run.limit.resumed':
    case 'run.unparked':
    case 'run.requeued':
    case 'run.skipped':
    case 'run.withdrawn':
      return event.data.reason;
    case 'run.ended':
      return `ended: ${event.data.reason}`;

    // A run's execution on its computer: inputs.
    case 'run.handed.over': {
      const { budgetS, laneSession, local } = event.data;
      const what = local ? 'a local turn of `runledger run`, to be run here' : 'handed over to be run';
      return `${what} (${startWords(budgetS, laneSession)})`;
    }
    case 'run.process.began':
      return `the agent's process began (pid ${event.data.pid}${event.data.resuming ? `, resuming session ${event.data.resuming}` : ''})`;
    case 'run.session.announced':
      return `the agent announced its session ${event.data.sessionId}`;
    case 'run.process.exited':
      return withStrays(withChanges(withUsage(processExit(event.data), event.data.usage), event.data), event.data.strays);
    case 'run.workspace.prepared': {
      const { repo, path, branch, head, made, from, repaired } = event.data;
      const how = made ? `made on branch ${branch}${from ? ` from ${from}` : ''}` : `kept from an earlier turn, on ${branch}`;
      return `its worktree of repository ${repo} is ready at ${path} (${how}); HEAD before the turn: ${head.slice(0, 12)}${repaired ? `; repaired: ${repaired}` : ''}`;
    }
    case 'run.branch.pushed':
      return event.data.ok
        ? `its lane's branch was pushed to origin: ${event.data.detail}`
        : `its lane's branch could not be pushed to origin: ${event.data.detail}`;
    case 'run.workspace.failed':
      return `its worktree${event.data.repo ? ` of repository ${event.data.repo}` : ''} could not be had: ${event.data.error}`;
    case 'run.cancel.pushed':
      return `the board pushed a cancel (frame ${event.data.frameId})`;
    case 'run.heartbeat.answered': {
      const { status, cancelRequested } = event.data;
      if (cancelRequested) return `the board answered the heartbeat ${status}: a cancel was asked for`;
      return status === 0 ? 'the heartbeat got no answer: network error' : `the board answered the heartbeat: ${status}`;
    }
    case 'run.completion.answered':
      return event.data.status === 0 ? 'the completion got no answer: network error' : `the board answered the completion: ${event.data.status}`;
    case 'run.reply.refused':
      return `the board refused the reply: ${event.data.status}`;
    case 'run.completion.due':
      return 'its completion is due to be sent again';
    case 'run.found.interrupted': {
      const { pid, alive } = event.data;
      return `found at start-up with no recorded exit: ${pid === null ? 'no process was recorded' : `process ${pid} is ${alive ? 'still alive' : 'gone'}`}`;
    }
    case 'run.claim.refused':
      return `the board granted the claim, but its answer was refused (${event.data.problem}): completed as failed, never run`;
    case 'run.shutdown.before.start':
      return 'the daemon shut down before this run started';

    // A run's execution on its computer: decisions.
    case 'run.workspace.requested': {
      const { repo, base, lane } = event.data;
      const where = repo === null ? 'a repository' : `repository ${repo}`;
      return `to be run in lane ${lane}'s worktree of ${where}${base ? ` (a new branch starts from ${base})` : ''}: made or found first`;
    }
    case 'run.branch.push.requested':
      return `its turn committed to ${event.data.branch}: the branch goes to origin before the run is completed`;
    case 'run.execution.requested': {
      const { deadlineAt, resume, budgetS } = event.data;
      const budget = budgetS === undefined || budgetS === 0 ? '' : ` (budget ${budgetS} s)`;
      return `to be run${deadlineAt === null ? ', no time limit' : `, deadline ${clock(deadlineAt)}${budget}`}${resume ? `, resuming session ${resume}` : ''}`;
    }
    case 'run.cancel.decided':
    case 'run.resolved.elsewhere':
      return event.data.reason;
    case 'run.limit.reached':
      return `${event.data.reason}${event.data.resetAt === undefined ? '' : ` (reset at ${clock(event.data.resetAt)})`}: “${event.data.words}”`;
    case 'run.start.held':
      return `${event.data.reason} (its login's limit lifts at ${clock(event.data.until)}; then ${startWords(event.data.start.budgetS, event.data.start.laneSession)})`;
    case 'run.limit.over':
      return 'its login’s usage limit lifted and its queue gave it a slot: it runs again';
    case 'run.kill.requested':
      return `kill of process group ${event.data.pid}: ${event.data.reason}`;
    case 'run.completion.requested': {
      const { attempt, result } = event.data;
      return `completion sent (attempt ${attempt}): ${result.ok ? 'succeeded' : `failed${result.error ? `: ${result.error}` : ''}`}`;
    }
    case 'run.completion.paused':
      return event.data.reason;
    case 'run.completion.retrying':
      return `${event.data.reason} (next try at ${clock(event.data.notBefore)})`;
    case 'run.settled':
      return `settled, ${event.data.reported ? 'reported to the board' : 'not reported'}: ${event.data.reason}`;
    case 'lane.session.remembered':
      return `lane ${event.data.lane} keeps session ${event.data.sessionId} for its next turn (from run ${event.data.runId})`;
    case 'lane.session.forgotten':
      return `lane ${event.data.lane} forgets session ${event.data.sessionId}: ${event.data.reason}`;

    // The board: inputs.
    case 'board.run.submitted': {
      const { lane, agentId, timeoutS } = event.data;
      const budget = timeoutS === null ? '' : timeoutS === 0 ? ', no time limit' : `, budget ${timeoutS} s`;
      return `submitted to lane ${lane}${agentId ? ` for agent ${agentId}` : ''}${budget}`;
    }
    case 'board.computer.added':
      return `computer ${event.data.computerId} was added`;
    case 'board.computer.connected':
      return `computer ${event.data.computerId} connected`;
    case 'board.computer.disconnected':
      return `computer ${event.data.computerId} disconnected`;
    case 'board.claim.requested':
      return `computer ${event.data.computerId} asked to claim it${event.data.incarnation ? ` (incarnation ${event.data.incarnation})` : ''}`;
    case 'board.offer.declined':
      return `computer ${event.data.computerId} declined its frame: ${event.data.reason}`;
    case 'board.offer.stale':
      return `it stayed unclaimed with its lane free since ${clock(event.data.unclaimedSince)}`;
    case 'board.heartbeat.lapsed':
      return `its heartbeats stopped (the last at ${clock(event.data.lastHeartbeatAt)})`;
    case 'board.cancel.requested':
      return 'a cancel was asked for';
    case 'board.run.started':
      return `computer ${event.data.computerId} reported it started`;
    case 'board.reply.received':
      return `computer ${event.data.computerId} sent its reply (${plural(event.data.text.length, 'character')})`;
    case 'board.completion.received': {
      const { computerId, ok, error } = event.data;
      return `computer ${computerId} reported it ${ok ? 'succeeded' : `failed${error ? `: ${error}` : ''}`}`;
    }

    // The board: decisions, their reasons worded here (a code), or as an older version recorded them.
    case 'board.run.queued': {
      const { lane, submittedOrder, waits } = event.data;
      return `queued on the board in lane ${lane} (submission ${submittedOrder})${waits ? `: ${wordBoardReason(waits)}` : ''}`;
    }
    case 'board.run.deduplicated':
    case 'board.run.cancelled':
    case 'board.run.resolved':
    case 'board.computer.registered':
    case 'board.computer.online':
    case 'board.computer.offline':
    case 'board.computer.draining':
      return wordBoardReason(event.data.reason);
    case 'board.run.offered':
      return `${wordBoardReason(event.data.reason)} (offered to ${event.data.computers.join(', ')})`;
    case 'board.run.claimed':
      return sayOnce(`claimed by ${event.data.computerId}`, wordBoardReason(event.data.reason));
    case 'board.run.running':
      return `running on ${event.data.computerId}: ${wordBoardReason(event.data.reason)}`;
    case 'board.run.cancel.requested':
      return `cancel passed on to ${event.data.computerId}: ${wordBoardReason(event.data.reason)}`;
    case 'board.run.replied':
      return `the reply was recorded (${plural(event.data.text.length, 'character')})`;
    case 'board.run.finished': {
      // The board's reason already says the outcome and the error's first line ("completed: failed (X)").
      const { state, error } = event.data;
      const reason = wordBoardReason(event.data.reason);
      const told = reason.startsWith(`completed: ${state}`) ? reason : `finished, ${state}: ${reason}`;
      const said = !error || state === 'cancelled' || told.includes(error.split('\n', 1)[0]!.slice(0, 100));
      return withUsage(said ? told : `${told} (${error})`, event.data.usage);
    }
    case 'board.request.refused':
      return `the ${event.data.request} request was refused ${event.data.status} ${event.data.code}: ${wordBoardReason(event.data.reason)}`;
    case 'board.request.repeated':
      return `the ${event.data.request} request was answered again ${event.data.status}: ${wordBoardReason(event.data.reason)}`;
    case 'board.request.rejected':
      return `${event.data.method} ${event.data.path} was rejected ${event.data.status} ${event.data.code}: ${event.data.reason}`;
    case 'board.requests.refused': {
      const reasons = Object.entries(event.data.reasons)
        .map(([code, n]) => `${code} ${n}`)
        .join(', ');
      return `${plural(event.data.count, 'request')} without a valid token refused from ${clock(event.data.first_at)} to ${clock(event.data.last_at)} (${reasons})`;
    }

    // A session's close on its computer.
    case 'session.run.ended':
      return `run ${event.data.runId} ended in it${event.data.bound ? '' : ' (a launch no session was ever read for)'}${event.data.pid === null ? '' : `, its process group ${event.data.pid} perhaps still alive`}`;
    case 'session.close.due': {
      const { lock, holder } = event.data;
      const found =
        holder === null
          ? 'unclaimed'
          : `claimed by ${holder.lock}${holder.alive === null ? '' : holder.alive ? ', alive' : ', whose process is gone'}`;
      return `a round of ${lock} reached its close (${found})`;
    }
    case 'session.read': {
      const { activity, failure } = event.data;
      if (activity === null) return `read just before the kill: it could not be read (${failure ?? 'no reason given'})`;
      const mark = activity.mark === null ? '' : `, record last written ${clock(activity.mark)}`;
      return `read just before the kill: ${activity.presence}, turn ${activity.turn}${mark}${activity.seen ? ` — ${activity.seen}` : ''}`;
    }
    case 'session.kill.answered':
      return `its kill (attempt ${event.data.attempt}) ${event.data.ok ? 'stopped it' : 'failed'}: ${event.data.detail}`;
    case 'session.close.intended':
      return `close intended: ${event.data.reason}`;
    case 'session.close.claimed':
      return `close claimed by ${event.data.lock} until ${clock(event.data.expires)}: ${event.data.reason}`;
    case 'session.close.deferred':
      return `close deferred (attempt ${event.data.attempt}): ${event.data.reason}`;
    case 'session.kill.requested':
      return `close goes ahead (attempt ${event.data.attempt}), stopping ${event.data.target}: ${event.data.reason}`;
    case 'session.closed':
      return `closed (attempt ${event.data.attempt}): ${event.data.reason}`;
    case 'session.close.incident':
      return `close failed for good (attempt ${event.data.attempt}), an incident: ${event.data.reason}`;

    // The board's hooks.
    case 'hook.tick.due':
      return 'a round ticked: the on_tick hook is due';
    case 'hook.exited': {
      const { hook, ok, exitCode, signal, error, outputTail, durationMs, effect } = event.data;
      const how = error ?? (exitCode !== null ? `exit ${exitCode}` : signal ? `signal ${signal}` : 'no exit code');
      const said = outputTail.trim().split('\n').at(-1);
      return `hook ${hook} (for seq ${effect}) ${ok ? 'ran' : 'failed'}: ${how}, ${durationMs} ms${said ? `; it said: ${said}` : ''}`;
    }
    case 'hook.interrupted':
      return `hook ${event.data.hook} (for seq ${event.data.effect}) was interrupted: ${event.data.detail}`;

    // Notifications: a session's inbox.
    case 'subscription.opened': {
      const { subscriptionId, lane, kinds } = event.data;
      return `subscription ${subscriptionId} hears ${kinds.join(', ')}${lane ? ` of lane ${lane}` : ''}`;
    }
    case 'subscription.closed':
      return `subscription ${event.data.subscriptionId} closed: ${event.data.reason}`;
    case 'inbox.read': {
      const { record, liveness, heard } = event.data;
      return `a round found ${plural(heard.length, 'notice')} to file (recorded ${record}${liveness ? `, read ${liveness}` : ''})`;
    }
    case 'notices.handed':
      return `notices up to #${event.data.through} were handed to the agent${event.data.runId ? ` ahead of run ${event.data.runId}` : ''}`;
    case 'notice.filed':
      return `notice #${event.data.n} filed for subscription ${event.data.subscriptionId}: ${event.data.text}`;
    case 'inbox.waiting':
    case 'inbox.withheld':
      return event.data.reason;

    // Adoption: a lane bound to a live session.
    case 'adoption.requested':
      return `lane ${event.data.lane} asked to adopt session ${event.data.sessionId}`;
    case 'adoption.released':
      return `lane ${event.data.lane}'s adoption request was released: ${event.data.reason}`;
    case 'adoption.listing.read': {
      const { sessionId, listedOn, error, lock } = event.data;
      return `${lock} read the listing of session ${sessionId}: ${listedOn ? `on ${listedOn}` : error ? `unreadable (${error})` : 'not listed'}`;
    }
    case 'adoption.bind.ended':
      return `the bind of session ${event.data.sessionId} by ${event.data.lock} ${event.data.ok ? 'was made' : `failed: ${event.data.error ?? 'no reason given'}`}`;
    case 'adoption.claimed':
      return `${event.data.reason} (until ${clock(event.data.expires)})`;
    case 'adoption.waiting':
      return `${event.data.reason} (until ${clock(event.data.until)})`;
    case 'adoption.adopted':
      return `adopted: ${event.data.reason}`;
    case 'adoption.failed':
      return `the adoption of session ${event.data.sessionId} failed: ${event.data.reason}`;

    case 'token.added':
      return `submit token ${event.data.name} added (its hash only is kept)`;

    case 'log.archived':
      return `events ${event.data.from}..${event.data.to} left the live log for archive/${event.data.file} (older than ${event.data.retainDays} days)`;

    case 'log.archive.deleted':
      return `archive/${event.data.file} (events ${event.data.from}..${event.data.to}) deleted, older than ${event.data.afterDays} days`;

    default: {
      const unknown: never = event;
      return `an event of type ${(unknown as DomainEvent).type}`;
    }
  }
}

/** What a turn in a worktree changed, after what happened: "changed nothing" is said too. */
function withChanges(text: string, exit: EventData<'run.process.exited'>): string {
  if (exit.changesError !== undefined) return `${text}; what it changed could not be read: ${exit.changesError}`;
  if (!exit.changes) return text;
  const cut = exit.changes.diffCut ? ` (diff of ${exit.changes.diffBytes} bytes, cut at ${MAX_DIFF_BYTES} in the log)` : '';
  return `${text}; in its worktree the turn ${describeChanges(exit.changes)}${cut}`;
}

/** What the agent left running and had to be killed, when it left anything. */
function withStrays(text: string, strays: EventData<'run.process.exited'>['strays']): string {
  if (!strays) return text;
  const named = strays.map(({ pid, command }) => `${command ?? 'pid'} ${pid}`).join(', ');
  return `${text}; it left ${strays.length === 1 ? 'a process' : 'processes'} running, killed: ${named}`;
}

/** What the turn cost, after what happened, when its agent said. */
function withUsage(text: string, usage: Usage | undefined): string {
  const words = usage ? usageWords(usage) : '';
  return words ? `${text}; usage: ${words}` : text;
}

function processExit(exit: EventData<'run.process.exited'>): string {
  const how = exit.exitCode !== null ? `with code ${exit.exitCode}` : exit.signal ? `on signal ${exit.signal}` : '';
  switch (exit.outcome) {
    case 'exited':
      return `the agent's process exited${how ? ` ${how}` : ''}${exit.reply === null ? ', with no reply' : ''}`;
    case 'timed_out':
      return "the agent's process ran out of its time budget";
    case 'cancelled':
      return "the agent's process was stopped: the run was cancelled";
    case 'killed':
      return `the agent's process was killed${how ? ` (${how})` : ''}`;
    case 'failed_to_start':
      return `the agent's process could not start${exit.stderrTail ? `: ${exit.stderrTail.trim().split('\n').at(-1)}` : ''}`;
  }
}

/** `HH:MM:SS` in UTC: the log's times are UTC, and so is every time the audit prints. */
export function clock(at: number): string {
  return new Date(at).toISOString().slice(11, 19);
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

const MAX_LINE = 300;

/** Errors and replies can span lines and pages; a timeline line is one line, bounded. */
function oneLine(text: string): string {
  const flat = text.replace(/\s*[\r\n]+\s*/g, ' ⏎ ').trim();
  return flat.length > MAX_LINE ? `${flat.slice(0, MAX_LINE - 1)}…` : flat;
}

/**
 * `head: reason`, unless the recorded reason says the head already (the board's claim reasons are
 * "claimed by c1"): each thing said once, from old logs and new alike.
 */
function sayOnce(head: string, reason: string): string {
  return reason === head || reason.startsWith(`${head} `) || reason.startsWith(`${head}:`) ? reason : `${head}: ${reason}`;
}

/** A run's start as its hand-over (or its queue's claim) recorded it: its budget, and the lane's session it resumes. */
function startWords(budgetS: number, laneSession: string | null): string {
  return `${budgetS === 0 ? 'no time limit' : `budget ${budgetS} s`}${laneSession ? `, its lane's session ${laneSession}` : ''}`;
}
