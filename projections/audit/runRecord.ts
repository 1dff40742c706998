import { wordBoardReason } from '../../events/boardReasons.ts';
import type { DomainEvent } from '../../events/catalog.ts';
import { parseStream } from '../../events/envelope.ts';
import type { Usage } from '../../events/usage.ts';
import { type ChangeSummary, summaryOf } from '../../events/workspace.ts';

/**
 * One run as its own events tell it (the board's `run:<id>` and each computer's copy): what the run
 * page and the history show. Read from the log per run, never kept for every run: the board's state
 * stays as small as it is, and a run the board has let go of is still shown.
 */
export interface RunRecord {
  readonly runId: string;
  lane: string | null;
  prompt: string | null;
  /** The board's state of it (docs/rules.md#wire-and-cli `state`); null while the log holds no board decision about it. */
  state: string | null;
  /** The computer that held its claim. */
  computer: string | null;
  submittedAt: number | null;
  claimedAt: number | null;
  /** Its first heartbeat on the board (`board.run.running`), else its process's start on a computer. */
  startedAt: number | null;
  finishedAt: number | null;
  /**
   * Its agent's process: when the first began and the last exited on its computer, as the computer
   * recorded them (null while its events are not in this log): how long the agent took.
   */
  processBeganAt: number | null;
  processExitedAt: number | null;
  reply: string | null;
  error: string | null;
  /** The end of its agent's stderr, as its computer recorded it when the process exited. */
  stderrTail: string | null;
  /** How its process ended there: `exited 0`, `timed_out`, … */
  exit: string | null;
  /** What its turn cost: the board's record of it, else its computer's (docs/rules.md#wire-and-cli `usage`); null when no agent said. */
  usage: Usage | null;
  /** What its turn changed in its lane's worktree: the board's record of it, else its computer's; null outside a repository. */
  changes: ChangeSummary | null;
  /** The diff it left, when its computer's events are in this log (the board keeps the summary only). */
  diff: { readonly text: string; readonly bytes: number; readonly cut: boolean; readonly repo: string } | null;
  /** Where each phase starts in the log: the run page groups its timeline by them. */
  phases: { claimed: number | null; running: number | null; finished: number | null };
  /** The last seq folded: an event at or before it is not folded again. */
  lastSeq: number;
  /**
   * The last seq folded of each writer's log, by owner ('' for the board): a remote computer's events
   * (reported to its board) count in its own log, so its seqs and the board's are not one order.
   */
  lastSeqs: Record<string, number>;
}

export function initialRunRecord(runId: string): RunRecord {
  return {
    runId,
    lane: null,
    prompt: null,
    state: null,
    computer: null,
    submittedAt: null,
    claimedAt: null,
    startedAt: null,
    finishedAt: null,
    processBeganAt: null,
    processExitedAt: null,
    reply: null,
    error: null,
    stderrTail: null,
    exit: null,
    usage: null,
    changes: null,
    diff: null,
    phases: { claimed: null, running: null, finished: null },
    lastSeq: 0,
    lastSeqs: {},
  };
}

/** Folds one event about the run (any other is ignored); updates `record` in place and returns it. */
export function evolveRunRecord(record: RunRecord, event: DomainEvent): RunRecord {
  const owner = parseStream(event.stream).owner ?? '';
  if (event.seq <= (record.lastSeqs[owner] ?? 0)) return record;
  record.lastSeqs[owner] = event.seq;
  record.lastSeq = Math.max(record.lastSeq, event.seq);
  if (!('runId' in event.data) || event.data.runId !== record.runId) return record;
  const finished = () => {
    record.finishedAt = event.at;
    record.phases.finished ??= event.seq;
  };
  switch (event.type) {
    case 'board.run.queued':
      record.lane = event.data.lane;
      record.prompt = event.data.prompt;
      record.submittedAt = event.at;
      record.state = 'queued';
      break;
    case 'board.run.claimed':
      record.state = 'claimed';
      record.computer = event.data.computerId;
      record.claimedAt = event.at;
      record.phases.claimed = event.seq;
      break;
    case 'board.run.running':
      record.state = 'running';
      record.startedAt = event.at;
      record.phases.running = event.seq;
      break;
    case 'run.process.began':
      // The computer's side of the start: the board hears of it with the first heartbeat.
      if (record.startedAt === null) record.startedAt = event.at;
      record.processBeganAt ??= event.at;
      record.phases.running ??= event.seq;
      break;
    case 'board.run.replied':
      record.reply = event.data.text;
      break;
    case 'run.process.exited':
      record.processExitedAt = event.at;
      record.stderrTail = event.data.stderrTail || record.stderrTail;
      record.reply ??= event.data.reply;
      record.usage ??= event.data.usage ?? null;
      if (event.data.changes) {
        record.changes ??= summaryOf(event.data.changes);
        record.diff = {
          text: event.data.changes.diff,
          bytes: event.data.changes.diffBytes,
          cut: event.data.changes.diffCut,
          repo: event.data.changes.repo,
        };
      }
      record.exit = event.data.outcome === 'exited' ? `exited ${event.data.exitCode ?? event.data.signal ?? '?'}` : event.data.outcome;
      break;
    case 'board.run.finished':
      record.state = event.data.state;
      record.error = event.data.error ?? null;
      record.computer = event.data.computerId;
      if (event.data.usage) record.usage = event.data.usage;
      if (event.data.changes) record.changes = event.data.changes;
      finished();
      break;
    case 'board.run.resolved':
      record.state = 'resolved';
      record.error = wordBoardReason(event.data.reason);
      finished();
      break;
    case 'board.run.cancelled':
      record.state = 'cancelled';
      record.error = wordBoardReason(event.data.reason);
      finished();
      break;
    default:
      break;
  }
  return record;
}

/**
 * How long its agent took: from its process's start to its exit when its computer's events are in this
 * log; else, as the board saw it, from its start (its first heartbeat) or, for a turn that ended before
 * its first heartbeat came, from its claim, to its end. Null while it has not both begun and ended.
 */
export function durationOf(record: RunRecord): number | null {
  if (record.processBeganAt !== null && record.processExitedAt !== null) return Math.max(0, record.processExitedAt - record.processBeganAt);
  const began = record.startedAt ?? record.claimedAt;
  if (began !== null && record.finishedAt !== null) return Math.max(0, record.finishedAt - began);
  return null;
}

export function runRecordOf(runId: string, events: readonly DomainEvent[]): RunRecord {
  return events.reduce(evolveRunRecord, initialRunRecord(runId));
}

/** The types that end a run on the board: what the history of finished runs is made of. */
export const FINISHING_TYPES: ReadonlySet<string> = new Set(['board.run.finished', 'board.run.resolved', 'board.run.cancelled']);
