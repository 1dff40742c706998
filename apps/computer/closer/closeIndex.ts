import type { RunExecution } from '../../../actors/run/runState.ts';
import { type CloseState, closeProjection, openCloses } from '../../../projections/close.ts';
import { type ExecutionsState, executionsProjection } from '../../../projections/executions.ts';
import { hydrateProjections } from '../../../runtime/folds/hydrate.ts';
import type { EventStore } from '../../../runtime/store/eventStore.ts';

/**
 * What a round reads from the log before it acts: the open closes (the close projection) and the
 * computer's unsettled runs (the executions projection), from their checkpoints, then kept current by
 * reading on from where they stand. Written by any process: each refresh reads what was appended since.
 */
export class CloseIndex {
  private close: CloseState = {};
  private executions: ExecutionsState = {};
  private seq = -1;
  private refreshing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: EventStore,
    private readonly computer: string,
  ) {}

  /** Reads the log on to its end (one refresh at a time). */
  refresh(): Promise<void> {
    this.refreshing = this.refreshing.then(() => this.readOn());
    return this.refreshing;
  }

  async openCloses(): Promise<string[]> {
    await this.refresh();
    return openCloses(this.close, this.computer);
  }

  async liveRuns(): Promise<Record<string, RunExecution>> {
    await this.refresh();
    return this.executions[this.computer] ?? {};
  }

  private async readOn(): Promise<void> {
    if (this.seq < 0) {
      const folded = await hydrateProjections(this.store, [closeProjection, executionsProjection]);
      const close = folded.get(closeProjection.name)!;
      const executions = folded.get(executionsProjection.name)!;
      this.close = close.state as CloseState;
      this.executions = executions.state as ExecutionsState;
      // Both were folded to the log's end: the later checkpoint's tail was folded into the other too.
      this.seq = Math.max(close.seq, executions.seq);
      return;
    }
    for (;;) {
      const page = await this.store.readAll(this.seq, 1000);
      for (const event of page) {
        this.close = closeProjection.evolve(this.close, event);
        this.executions = executionsProjection.evolve(this.executions, event);
        this.seq = event.seq;
      }
      if (page.length < 1000) return;
    }
  }
}
