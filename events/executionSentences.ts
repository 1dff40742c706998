import type { EventData } from './catalog.ts';
import { wordExecutionReason } from './executionReasons.ts';

import { clock, type Sentences, startWords, withUsage } from './words.ts';
import { describeChanges, MAX_DIFF_BYTES } from './workspace.ts';

/** What `runledger audit` says of each event of the run's execution on its computer (see words.ts). */
export const executionSentences: Sentences<'execution'> = {
  // A run's execution on its computer: inputs.
  'run.handed.over': (event) => {
    const { budgetS, laneSession, local } = event.data;
    const what = local ? 'a local turn of `runledger run`, to be run here' : 'handed over to be run';
    return `${what} (${startWords(budgetS, laneSession)})`;
  },
  'run.process.began': (event) =>
    `the agent's process began (pid ${event.data.pid}${event.data.resuming ? `, resuming session ${event.data.resuming}` : ''})`,
  'run.session.announced': (event) => `the agent announced its session ${event.data.sessionId}`,
  'run.process.exited': (event) => withStrays(withChanges(withUsage(processExit(event.data), event.data.usage), event.data), event.data.strays),
  'run.workspace.prepared': (event) => {
    const { repo, path, branch, head, made, from, repaired } = event.data;
    const how = made ? `made on branch ${branch}${from ? ` from ${from}` : ''}` : `kept from an earlier turn, on ${branch}`;
    return `its worktree of repository ${repo} is ready at ${path} (${how}); HEAD before the turn: ${head.slice(0, 12)}${repaired ? `; repaired: ${repaired}` : ''}`;
  },
  'run.branch.pushed': (event) =>
    event.data.ok
      ? `its lane's branch was pushed to origin: ${event.data.detail}`
      : `its lane's branch could not be pushed to origin: ${event.data.detail}`,
  'run.workspace.failed': (event) =>
    `its worktree${event.data.repo ? ` of repository ${event.data.repo}` : ''} could not be had: ${event.data.error}`,
  'run.cancel.pushed': (event) => `the board pushed a cancel (frame ${event.data.frameId})`,
  'run.heartbeat.answered': (event) => {
    const { status, cancelRequested } = event.data;
    if (cancelRequested) return `the board answered the heartbeat ${status}: a cancel was asked for`;
    return status === 0 ? 'the heartbeat got no answer: network error' : `the board answered the heartbeat: ${status}`;
  },
  'run.completion.answered': (event) =>
    event.data.status === 0 ? 'the completion got no answer: network error' : `the board answered the completion: ${event.data.status}`,
  'run.reply.refused': (event) => `the board refused the reply: ${event.data.status}`,
  'run.completion.due': () => 'its completion is due to be sent again',
  'run.found.interrupted': (event) => {
    const { pid, alive } = event.data;
    return `found at start-up with no recorded exit: ${pid === null ? 'no process was recorded' : `process ${pid} is ${alive ? 'still alive' : 'gone'}`}`;
  },
  'run.claim.refused': (event) => `the board granted the claim, but its answer was refused (${event.data.problem}): completed as failed, never run`,
  'run.shutdown.before.start': () => 'the daemon shut down before this run started',
  // A run's execution on its computer: decisions, their reasons worded from their codes (or as an older version recorded them).
  'run.workspace.requested': (event) => {
    const { repo, base, lane } = event.data;
    const where = repo === null ? 'a repository' : `repository ${repo}`;
    return `to be run in lane ${lane}'s worktree of ${where}${base ? ` (a new branch starts from ${base})` : ''}: made or found first`;
  },
  'run.branch.push.requested': (event) => `its turn committed to ${event.data.branch}: the branch goes to origin before the run is completed`,
  'run.execution.requested': (event) => {
    const { deadlineAt, resume, budgetS } = event.data;
    const budget = budgetS === undefined || budgetS === 0 ? '' : ` (budget ${budgetS} s)`;
    return `to be run${deadlineAt === null ? ', no time limit' : `, deadline ${clock(deadlineAt)}${budget}`}${resume ? `, resuming session ${resume}` : ''}`;
  },
  'run.cancel.decided': (event) => wordExecutionReason(event.data.reason),
  'run.resolved.elsewhere': (event) => wordExecutionReason(event.data.reason),
  'run.limit.reached': (event) =>
    `${wordExecutionReason(event.data.reason)}${event.data.resetAt === undefined ? '' : ` (reset at ${clock(event.data.resetAt)})`}: “${event.data.words}”`,
  'run.start.held': (event) =>
    `${wordExecutionReason(event.data.reason)} (its login's limit lifts at ${clock(event.data.until)}; then ${startWords(event.data.start.budgetS, event.data.start.laneSession)})`,
  'run.limit.over': () => 'its login’s usage limit lifted and its queue gave it a slot: it runs again',
  'run.kill.requested': (event) => `kill of process group ${event.data.pid}: ${event.data.reason}`,
  'run.completion.requested': (event) => {
    const { attempt, result } = event.data;
    return `completion sent (attempt ${attempt}): ${result.ok ? 'succeeded' : `failed${result.error ? `: ${result.error}` : ''}`}`;
  },
  'run.completion.paused': (event) => wordExecutionReason(event.data.reason),
  'run.completion.retrying': (event) => `${wordExecutionReason(event.data.reason)} (next try at ${clock(event.data.notBefore)})`,
  'run.settled': (event) => `settled, ${event.data.reported ? 'reported to the board' : 'not reported'}: ${wordExecutionReason(event.data.reason)}`,
  'lane.session.remembered': (event) =>
    `lane ${event.data.lane} keeps session ${event.data.sessionId} for its next turn (from run ${event.data.runId})`,
  'lane.session.forgotten': (event) => `lane ${event.data.lane} forgets session ${event.data.sessionId}: ${wordExecutionReason(event.data.reason)}`,
};

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
