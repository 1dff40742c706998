import { type Observable, Subject } from 'rxjs';
import { progressLine } from '../agent/activity.ts';

/** A run's progress as the board last heard it: its agent's latest tool call or message, and when. */
export interface Progress {
  readonly text: string;
  readonly at: number;
}

export interface ProgressChange {
  readonly runId: string;
  /** Null: the run ended, and its progress with it. */
  readonly progress: Progress | null;
}

/**
 * What each running run's agent is doing, from the `progress` of its heartbeats (docs/rules.md#wire-and-cli), kept in the
 * board's memory only: progress changes no decision, so nothing is appended for it and the log does
 * not grow with time. An entry lives while its run is open (the board drops it when the run ends), so
 * this holds at most one short line per open claim. The run's page and `runledger show --follow`
 * hear each change.
 */
export class RunProgress {
  private readonly latest = new Map<string, Progress>();
  private readonly changes = new Subject<ProgressChange>();
  readonly changed: Observable<ProgressChange> = this.changes.asObservable();

  /**
   * A heartbeat's progress: told on only when it changed. Bounded and masked here again, as its computer
   * does (one rule, adapters/agent/activity.ts): a computer of another version may send it as it came.
   */
  heard(runId: string, text: string, at: number): void {
    const line = progressLine(text);
    if (line === '' || this.latest.get(runId)?.text === line) return;
    const progress = { text: line, at };
    this.latest.set(runId, progress);
    this.changes.next({ runId, progress });
  }

  of(runId: string): Progress | null {
    return this.latest.get(runId) ?? null;
  }

  /** The run ended: its last line goes (its tail is in its completion, as ever). */
  ended(runId: string): void {
    if (this.latest.delete(runId)) this.changes.next({ runId, progress: null });
  }

  get size(): number {
    return this.latest.size;
  }
}
