import { describeFault, type Fault, type FaultKind } from './faults.ts';
import { INVARIANTS } from './invariants.ts';
import { SIM_EPOCH } from './scheduler.ts';
import { shrink } from './shrink.ts';
import { runWorld, type WorldOptions, type WorldResult } from './world.ts';

export interface RunOptions {
  readonly faults: ReadonlySet<FaultKind>;
  readonly size?: 'small' | 'normal';
  /** Two boards on one shared log instead of one. */
  readonly boards?: 1 | 2;
  /** Computers in every world instead of the two or three each seed draws. */
  readonly computers?: number;
  readonly steps?: number;
  readonly plan?: readonly Fault[];
  readonly keepRuns?: readonly number[];
  readonly shrink?: boolean;
  readonly progress?: ((line: string) => void) | undefined;
  /**
   * Of two boards: each world on a fresh PostgreSQL log (sim/pgLog.ts) this makes, and `done` with it once
   * played (held or not). Such a world is not played again row for row, so a failure is not shrunk.
   */
  readonly postgres?: { fresh(seed: number): Promise<string>; done(log: string, held: boolean): Promise<void> };
  /** Test seams (planted bugs) handed to every world. */
  readonly world?: Partial<WorldOptions>;
}

/** What a failing seed comes down to: its invariant, the shortest history found, and the events around it. */
export interface Failure {
  readonly seed: number;
  readonly invariant: string;
  readonly detail: string;
  readonly step: number;
  readonly atMs: number;
  readonly plan: readonly string[];
  readonly keptRuns: readonly number[] | null;
  readonly shrinkRuns: number;
  /** The last steps before the violation. */
  readonly history: readonly string[];
  /** The logs' rows around it: those naming the runs it names, and the last ones before it. */
  readonly events: readonly string[];
  /** The command that plays exactly this (shrunk) world again. */
  readonly replay: string;
}

export interface Summary {
  readonly seeds: number;
  readonly passed: number;
  readonly steps: number;
  readonly realMs: number;
  readonly seedsPerSecond: number;
  readonly virtualHours: number;
  readonly checks: Readonly<Record<string, number>>;
  readonly failure: Failure | null;
  readonly faults: readonly string[];
}

/** Plays `seeds` one after another; stops at the first failure, shrinks it and reports it. */
export async function runSeeds(seeds: readonly number[], options: RunOptions): Promise<Summary> {
  const checks: Record<string, number> = Object.fromEntries(INVARIANTS.map((n) => [n, 0]));
  const started = performance.now();
  let steps = 0;
  let virtualMs = 0;
  let passed = 0;
  let failure: Failure | null = null;
  for (const seed of seeds) {
    const world = {
      ...options.world,
      seed,
      faults: options.faults,
      ...(options.size ? { size: options.size } : {}),
      ...(options.boards ? { boards: options.boards } : {}),
      ...(options.computers ? { computers: options.computers } : {}),
      ...(options.steps !== undefined ? { steps: options.steps } : {}),
    };
    const postgres = await options.postgres?.fresh(seed);
    const result = await runWorld({
      ...world,
      ...(options.plan ? { plan: options.plan } : {}),
      ...(options.keepRuns ? { keepRuns: options.keepRuns } : {}),
      ...(postgres === undefined ? {} : { postgres }),
    });
    if (postgres !== undefined) await options.postgres!.done(postgres, result.ok);
    steps += result.steps;
    virtualMs += result.virtualMs;
    for (const [name, n] of Object.entries(result.checks)) checks[name] = (checks[name] ?? 0) + n;
    if (result.ok) {
      passed++;
      continue;
    }
    options.progress?.(`seed ${seed}: ${result.violation!.invariant} broken at step ${result.steps}; shrinking the history...`);
    const shrunk =
      options.shrink === false || options.plan || options.postgres
        ? { result, tries: 0, keepRuns: options.keepRuns ?? null }
        : await shrink(world, result);
    failure = describeFailure(shrunk.result, shrunk.keepRuns, shrunk.tries, options);
    break;
  }
  const realMs = performance.now() - started;
  const ran = passed + (failure ? 1 : 0);
  return {
    seeds: ran,
    passed,
    steps,
    realMs: Math.round(realMs),
    seedsPerSecond: Math.round((ran / (realMs / 1000)) * 10) / 10,
    virtualHours: Math.round((virtualMs / 3_600_000) * 10) / 10,
    checks,
    failure,
    faults: [...options.faults],
  };
}

function describeFailure(result: WorldResult, keepRuns: readonly number[] | null, tries: number, options: RunOptions): Failure {
  const v = result.violation!;
  const ids = [...new Set([...v.detail.matchAll(/run ([0-9a-f]{8})/g)].map((m) => m[1]!))];
  const before = result.rows.filter((row) => Number(row.split(' ')[4]) <= SIM_EPOCH + v.at + 1);
  const named = ids.length ? result.rows.filter((row) => ids.some((id) => row.includes(id))) : [];
  const events = [...new Set([...named, ...before.slice(-15)])].map((row) => row.slice(0, 300));
  const args = [`--seed ${result.seed}`, `--faults ${[...options.faults].join(',') || 'none'}`, `--size ${options.size ?? 'normal'}`];
  if (options.boards === 2) args.push('--boards 2');
  if (options.computers) args.push(`--computers ${options.computers}`);
  if (keepRuns) args.push(`--runs ${keepRuns.join(',')}`);
  args.push(`--plan '${JSON.stringify(result.plan)}'`);
  return {
    seed: result.seed,
    invariant: v.invariant,
    detail: v.detail,
    step: v.step,
    atMs: v.at,
    plan: result.plan.map(describeFault),
    keptRuns: keepRuns,
    shrinkRuns: tries,
    history: result.history.slice(-30).map((s) => `#${s.n} +${(s.at / 1000).toFixed(3)}s ${s.what}`),
    events,
    replay: `npm run sim -- ${args.join(' ')}`,
  };
}

export function formatSummary(s: Summary): string {
  const width = Math.max(...Object.keys(s.checks).map((k) => k.length));
  const lines = [
    `${s.passed}/${s.seeds} seeds held (faults: ${s.faults.join(', ') || 'none'}): ${s.steps} steps, ${s.virtualHours} virtual hours in ${(s.realMs / 1000).toFixed(1)} s, ${s.seedsPerSecond} seeds/s`,
    'invariant checks:',
    ...Object.entries(s.checks).map(([name, n]) => `  ${name.padEnd(width)}  ${n}`),
  ];
  return lines.join('\n');
}

export function formatFailure(f: Failure): string {
  return [
    '',
    `VIOLATION seed ${f.seed}: ${f.invariant} at step ${f.step} (+${(f.atMs / 1000).toFixed(3)} s)`,
    `  ${f.detail}`,
    `shortest history found (${f.shrinkRuns} worlds tried): faults ${f.plan.length ? f.plan.join('; ') : 'none'}${f.keptRuns ? `; runs ${f.keptRuns.join(',')} of the seed's` : ''}`,
    'last steps:',
    ...f.history.map((h) => `  ${h}`),
    'events around it (log, seq, stream, type, at, cause, data):',
    ...f.events.map((e) => `  ${e}`),
    `replay: ${f.replay}`,
  ].join('\n');
}
