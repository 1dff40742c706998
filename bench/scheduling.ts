/**
 * The cost of one scheduling decision with 100 runs queued and with 100,000 runs queued over 10,000
 * lanes (ten a lane in both): `decideStep` of an input that frees a slot, so `pickNextRuns` starts the
 * next run from the ready heap. The queue is kept at its size as it goes (each started run is granted
 * its claim and a new frame arrives, untimed), so every round measures the same queue. Target: the
 * large queue costs at most 3x the small one a decision.
 *
 *   npx tsx bench/scheduling.ts [--quick] [--rounds N]
 */

import { decideStep } from '../actors/decideStep.ts';
import { queueDecider } from '../actors/lane/queueDecider.ts';
import { initialQueueState, type QueueState } from '../actors/lane/queueState.ts';
import type { NewDomainEvent } from '../events/catalog.ts';
import { type Benchmark, type Row, runIfMain } from './harness.ts';

const COMPUTER = 'c1';
const AT = Date.UTC(2026, 0, 1);
const SLOTS = 4;
const RUNS_PER_LANE = 10;
const TARGET = 3;

export interface SchedulingOptions {
  readonly quick?: boolean;
  readonly rounds?: number;
  /** Queue sizes, small first. */
  readonly sizes?: readonly [small: number, large: number];
}

/** One kind of decision, measured on both queues. */
export interface SchedulingFigures {
  readonly decision: string;
  /** Median over the rounds of each round's median µs a decision. */
  readonly smallUs: number;
  readonly largeUs: number;
  readonly ratio: number;
  readonly ratios: readonly number[];
}

const stream = (runId: string): string => `${COMPUTER}/run:${runId}`;
const computerStream = `${COMPUTER}/computer:${COMPUTER}`;

/** A computer's queue and the inputs that keep it busy, at a steady size. */
class Workload {
  state: QueueState = initialQueueState();
  /** Runs claiming and running, as the decisions said (at most SLOTS: scanning them is cheap). */
  private readonly claiming = new Set<string>();
  private readonly running = new Set<string>();
  private parked: string[] = [];
  private live = 0;
  private at = AT;
  private made = 0;

  constructor(
    readonly kind: 'ended' | 'busy',
    readonly runs: number,
    private readonly lanes: number,
  ) {
    // Built with the scheduler held, so filling it starts nothing; then released: SLOTS runs start.
    this.step({ stream: computerStream, type: 'computer.configured', data: { slots: SLOTS, loginCapacity: {} }, at: this.at });
    this.step({ stream: computerStream, type: 'scheduler.held', data: { held: true, reason: 'filling the bench queue' }, at: this.at });
    while (this.live < runs) this.arrive();
    this.step({ stream: computerStream, type: 'scheduler.held', data: { held: false, reason: 'bench queue filled' }, at: this.tick() });
    if (kind === 'ended') this.grantClaims();
  }

  /**
   * The timed input. `ended`: the oldest running run ends, its slot frees and the next candidate
   * starts. `busy`: the oldest claim is answered `conversation_busy`, the run is parked and its slot
   * goes to the next candidate.
   */
  next(): NewDomainEvent {
    if (this.kind === 'ended') {
      const runId = this.oldest(this.running);
      // The run's own settle, which its queue takes as its input (a message): it frees the slot and lane.
      const data = { runId, reported: true, reason: 'the board acknowledged its completion', result: { ok: true } };
      return { stream: stream(runId), type: 'run.settled', data, at: this.tick() };
    }
    const runId = this.oldest(this.claiming);
    return { stream: stream(runId), type: 'claim.answered', data: { runId, status: 409, code: 'conversation_busy' }, at: this.tick() };
  }

  /** Untimed upkeep after a decision: parked runs withdrawn, the queue refilled, claims granted. */
  restore(): void {
    const parked = this.parked;
    this.parked = [];
    for (const runId of parked) {
      this.step({ stream: stream(runId), type: 'frame.received', data: { frameId: `x-${runId}`, kind: 'run.cancelled', runId }, at: this.tick() });
    }
    while (this.live < this.runs) this.arrive();
    if (this.kind === 'ended') this.grantClaims();
  }

  step(input: NewDomainEvent): readonly NewDomainEvent[] {
    const step = decideStep(queueDecider, this.state, input, input.type === 'run.settled');
    if (!step) throw new Error(`the bench input ${input.type} was ignored`);
    this.state = step.state;
    for (const d of step.decisions) this.track(d);
    return step.decisions;
  }

  private track(d: NewDomainEvent): void {
    switch (d.type) {
      case 'run.queued':
        this.live++;
        break;
      case 'run.claim.started':
        this.claiming.add(d.data.runId);
        break;
      case 'run.claimed':
        this.claiming.delete(d.data.runId);
        this.running.add(d.data.runId);
        break;
      case 'run.parked':
        this.claiming.delete(d.data.runId);
        this.parked.push(d.data.runId);
        break;
      case 'run.ended':
      case 'run.skipped':
      case 'run.withdrawn':
        this.claiming.delete(d.data.runId);
        this.running.delete(d.data.runId);
        this.live--;
        break;
      default:
    }
  }

  private arrive(): void {
    const n = this.made++;
    const runId = `r${n}`;
    const lane = `lane-${n % this.lanes}`;
    this.step({
      stream: stream(runId),
      type: 'frame.received',
      data: { frameId: `f-${runId}`, kind: 'run.requested', runId, lane },
      at: this.tick(),
    });
  }

  private grantClaims(): void {
    for (const runId of [...this.claiming]) {
      this.step({ stream: stream(runId), type: 'claim.answered', data: { runId, status: 200, skills: [] }, at: this.tick() });
    }
  }

  private oldest(runs: ReadonlySet<string>): string {
    let best: { runId: string; arrival: number } | null = null;
    for (const runId of runs) {
      const run = this.state.runs[runId]!;
      if (!best || run.arrival < best.arrival) best = run;
    }
    if (!best) throw new Error(`no ${this.kind === 'ended' ? 'running' : 'claiming'} run in the bench queue`);
    return best.runId;
  }

  private tick(): number {
    this.at += 1;
    return this.at;
  }
}

/** `count` timed decisions of one kind; returns the median µs a decision. */
function measure(work: Workload, count: number): number {
  const samples = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    const input = work.next();
    const t0 = process.hrtime.bigint();
    const decisions = work.step(input);
    samples[i] = Number(process.hrtime.bigint() - t0) / 1000;
    if (!decisions.some((d) => d.type === 'run.claim.started'))
      throw new Error(`a ${work.kind} decision started no run: the bench measures the wrong thing`);
    work.restore();
  }
  return medianOf([...samples]);
}

function medianOf(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function gc(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

const DECISIONS = {
  ended: 'run ended → next run claimed',
  busy: 'claim busy → parked, next claimed',
} as const;

/** Measures both decisions on both queues, alternating small and large round by round. */
export async function measureScheduling(options: SchedulingOptions = {}, log: (line: string) => void = () => {}): Promise<SchedulingFigures[]> {
  const quick = options.quick ?? false;
  const rounds = options.rounds ?? (quick ? 3 : 7);
  const [smallRuns, largeRuns] = options.sizes ?? (quick ? [100, 20_000] : [100, 100_000]);
  const perRound = quick ? 1_000 : 5_000;
  const figures: SchedulingFigures[] = [];
  for (const kind of ['ended', 'busy'] as const) {
    let t = performance.now();
    const small = new Workload(kind, smallRuns, Math.max(1, smallRuns / RUNS_PER_LANE));
    const large = new Workload(kind, largeRuns, Math.max(1, largeRuns / RUNS_PER_LANE));
    log(`${kind}: queues of ${smallRuns} and ${largeRuns} runs built in ${(performance.now() - t).toFixed(0)} ms`);
    // Untimed warm-up, so the JIT has settled on both before the first round.
    measure(small, perRound);
    measure(large, perRound);
    const smallUs: number[] = [];
    const largeUs: number[] = [];
    for (let round = 0; round < rounds; round++) {
      t = performance.now();
      const order = round % 2 === 0 ? ([small, large] as const) : ([large, small] as const);
      const result = new Map<Workload, number>();
      for (const work of order) {
        gc();
        result.set(work, measure(work, perRound));
      }
      smallUs.push(result.get(small)!);
      largeUs.push(result.get(large)!);
      log(
        `${kind} round ${round + 1}/${rounds}: ${smallUs.at(-1)!.toFixed(2)} µs vs ${largeUs.at(-1)!.toFixed(2)} µs (${(performance.now() - t).toFixed(0)} ms)`,
      );
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    const ratios = smallUs.map((s, i) => largeUs[i]! / s);
    figures.push({ decision: DECISIONS[kind], smallUs: medianOf(smallUs), largeUs: medianOf(largeUs), ratio: medianOf(ratios), ratios });
  }
  return figures;
}

/** The bench as rows of `npm run bench`'s table: subject = the large queue, baseline = the small one. */
export async function runSchedulingBench(options: SchedulingOptions = {}, log?: (line: string) => void): Promise<Row[]> {
  const [smallRuns, largeRuns] = options.sizes ?? (options.quick ? [100, 20_000] : [100, 100_000]);
  const figures = await measureScheduling(options, log);
  return figures.map((f) => ({
    benchmark: `scheduling: ${f.decision}`,
    subject: `${f.largeUs.toFixed(2)} µs (${formatCount(largeRuns)} runs)`,
    baseline: `${f.smallUs.toFixed(2)} µs (${formatCount(smallRuns)} runs)`,
    ratio: `${f.ratio.toFixed(2)} (${Math.min(...f.ratios).toFixed(2)}–${Math.max(...f.ratios).toFixed(2)})`,
    target: `≤ ${TARGET.toFixed(2)}`,
    pass: f.ratio <= TARGET,
    note: 'median µs a decision (decideStep: decide, fold, pickNextRuns)',
  }));
}

export const scheduling: Benchmark = {
  name: 'scheduling',
  run: (options) => runSchedulingBench({ quick: options.quick, rounds: options.rounds }, (line) => process.stderr.write(`  [scheduling] ${line}\n`)),
};

function formatCount(n: number): string {
  return n >= 1000 ? `${n / 1000}k` : String(n);
}

async function main(argv: readonly string[]): Promise<number> {
  const quick = argv.includes('--quick');
  const roundsAt = argv.indexOf('--rounds');
  const rounds = roundsAt === -1 ? undefined : Number(argv[roundsAt + 1]);
  if (rounds !== undefined && !(Number.isInteger(rounds) && rounds > 0)) throw new Error('--rounds wants a positive integer');
  const rows = await runSchedulingBench({ quick, ...(rounds ? { rounds } : {}) }, (line) => process.stderr.write(`  ${line}\n`));
  for (const row of rows) {
    console.log(
      `${row.pass ? 'PASS' : 'FAIL'}  ${row.benchmark}: large ${row.subject}, small ${row.baseline}, ratio ${row.ratio} (target ${row.target})`,
    );
  }
  return rows.every((r) => r.pass) ? 0 : 1;
}

runIfMain(import.meta.url, main);
