import type { AgentUsage, FinalReply } from '../../adapters/agent/outputReaders.ts';
import type { Stray } from '../../adapters/agent/strays.ts';
import type { UsageLimit } from './usageLimit.ts';

/** How an agent's process ended, as the run's decider reads it (the process itself is in `execution/`). */
export type AgentOutcome = 'exited' | 'timed_out' | 'cancelled' | 'killed';

export interface AgentResult {
  /** `exited`: it ended by itself; otherwise who stopped it: the deadline, a cancel, or `kill()`. */
  readonly outcome: AgentOutcome;
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly reply: FinalReply;
  /** The end of the answer it was writing (salvage for a run stopped before it finished). */
  readonly tail: string;
  readonly stderrTail: string;
  readonly sessionId: string | null;
  /** The agent's own words when its terminal event says the turn failed (see `OutputReader.agentError`). */
  readonly agentError: string | null;
  /** Cost and tokens as the agent reported them, or null. */
  readonly usage: AgentUsage | null;
  /** The login's usage or rate limit, when the agent said the turn stopped at it. */
  readonly usageLimit: UsageLimit | null;
  /** The reason given to `cancel`, when the outcome is `cancelled`. */
  readonly cancelReason: string | null;
  /** Why the command could not be started at all (then `exitCode` and `signal` are null). */
  readonly error: string | null;
  /** From start to end on the injected clock. */
  readonly elapsedMs: number;
  /** What it left running at its end (a child holding its output, a grandchild in a session of its own), and had to be killed. */
  readonly strays: readonly Stray[];
}
