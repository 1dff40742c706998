import type { Prng } from './prng.ts';

/** The kinds of fault a world may be dealt (`--faults LIST`). */
export const FAULT_KINDS = [
  'crash', // a computer's process dies; restarted from its log a little later
  'stop', // a graceful stop (SIGTERM: the drain), then a restart
  'twin', // a second daemon under a computer's id and token, on a machine of its own
  'skew', // a computer's clock steps away from the board's
  'board', // the board's process dies (completions in flight) and restarts
  'net', // a link slows, loses and repeats messages for a while
  'cut', // a computer's push stream is cut
  'unreachable', // the board cannot be reached from a computer for a while
  'disk', // a machine's log cannot be written for a while
  'timers', // timers fire a little early or late (all world long)
  'split', // of two boards, one is cut off from every computer for a while (its database still reachable)
  'lag', // of two boards, one hears the other's commits seconds late for a while (a listener behind on its notifications)
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** One fault of a world's plan: when (ms after the start), what, where, for how long. */
export interface Fault {
  readonly at: number;
  readonly kind: Exclude<FaultKind, 'timers'>;
  /** The machine it strikes: a computer's id, or `board` (the board, of two the log they share), `board1`, `board2`. */
  readonly target: string;
  readonly forMs: number;
  /** Kind-specific: a skew in ms, a loss rate in percent. */
  readonly amount: number;
}

export function parseFaults(list: string): Set<FaultKind> {
  if (list === 'all') return new Set(FAULT_KINDS);
  if (list === 'none' || list === '') return new Set();
  const kinds = list.split(',').map((k) => k.trim());
  for (const kind of kinds) {
    if (!(FAULT_KINDS as readonly string[]).includes(kind))
      throw new Error(`--faults: unknown fault ${JSON.stringify(kind)}; the kinds are ${FAULT_KINDS.join(', ')}, all, none`);
  }
  return new Set(kinds as FaultKind[]);
}

/**
 * Draws a plan of faults within `windowMs` from the enabled kinds. `boards`: `['board']`, or the names of
 * the boards that share one log (a board fault, a split, strikes one of them); with one board, the plan
 * is drawn as it always was.
 */
export function drawPlan(
  prng: Prng,
  kinds: ReadonlySet<FaultKind>,
  computers: readonly string[],
  windowMs: number,
  boards: readonly string[] = ['board'],
): Fault[] {
  const several = boards.length > 1;
  const usable = [...kinds].filter((k): k is Fault['kind'] => k !== 'timers' && (several || (k !== 'split' && k !== 'lag')));
  if (usable.length === 0) return [];
  const count = prng.int(1, 6);
  const plan: Fault[] = [];
  for (let i = 0; i < count; i++) {
    const kind = prng.pick(usable);
    const target =
      kind === 'board' || kind === 'split' || kind === 'lag'
        ? several
          ? prng.pick(boards)
          : 'board'
        : kind === 'disk' && prng.chance(0.4)
          ? 'board'
          : prng.pick(computers);
    const forMs = kind === 'disk' ? prng.int(1, 120) * 1_000 : kind === 'skew' ? 0 : prng.int(1, 90) * 1_000;
    // A net fault: HTTP calls that crawl (3 s at most each way), or, more often, a whole link that crawls, loses and repeats.
    // A lag: how late the other board's commits reach this one (up to 5 s), each commit's NOTIFY late by as much.
    const amount =
      kind === 'skew'
        ? prng.int(-3_000, 3_000)
        : kind === 'net'
          ? prng.chance(0.4)
            ? 0
            : prng.int(5, 60)
          : kind === 'lag'
            ? prng.int(200, 5_000)
            : 0;
    plan.push({ at: prng.int(0, windowMs), kind, target, forMs, amount });
  }
  return plan.sort((a, b) => a.at - b.at);
}

export function describeFault(f: Fault): string {
  const extra =
    f.kind === 'skew'
      ? ` by ${f.amount} ms`
      : f.kind === 'net'
        ? f.amount
          ? ` (${f.amount}% loss, slow, repeats)`
          : ' (slow)'
        : f.kind === 'lag'
          ? ` (hears the other board's commits ${f.amount} ms late)`
          : '';
  return `+${(f.at / 1000).toFixed(1)}s ${f.kind} ${f.target}${f.forMs ? ` for ${(f.forMs / 1000).toFixed(0)}s` : ''}${extra}`;
}
