/**
 * Shared machinery of `npm run bench`: options, fresh logs on temp files, paired rounds and the table.
 *
 * Absolute times drift on a shared machine, so every benchmark measures its subject (the runledger
 * store) against a raw better-sqlite3 baseline in the same run, alternating the two round by round,
 * and judges the median of the per-round ratios.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { openSqliteStore, type SqliteEventStore } from '../runtime/store/sqlite/sqliteEventStore.ts';
// The benches write the test counter's events (the store's cost does not depend on which events): one
// copy of them, in the test fixtures, rather than a second event set kept here.
import { counterCodec } from '../test/fixtures/counter/counterEvents.ts';

export type Sync = 'full' | 'normal';

export interface BenchOptions {
  /** Smaller sizes and fewer rounds: a smoke test that the benchmarks still run. */
  readonly quick: boolean;
  readonly rounds: number;
  /** Only run benchmarks whose name contains one of these (empty: all). */
  readonly only: readonly string[];
}

export function parseOptions(argv: readonly string[]): BenchOptions {
  const quick = argv.includes('--quick');
  let rounds = quick ? 3 : 5;
  const only: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--quick') continue;
    if (arg === '--rounds') rounds = Number(argv[++i]);
    else if (arg.startsWith('--rounds=')) rounds = Number(arg.slice('--rounds='.length));
    else if (arg === '--only') only.push(...argv[++i]!.split(','));
    else if (arg.startsWith('--only=')) only.push(...arg.slice('--only='.length).split(','));
    else if (arg === '--help' || arg === '-h') {
      console.log('usage: npm run bench -- [--quick] [--rounds N] [--only name[,name]]');
      process.exit(0);
    } else throw new Error(`unknown option ${arg} (try --help)`);
  }
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error('--rounds wants a positive integer');
  return { quick, rounds, only };
}

/** One line of the final table. */
export interface Row {
  readonly benchmark: string;
  /** Already formatted, e.g. "41.2k ev/s" or "12.3 ms". */
  readonly subject: string;
  readonly baseline: string;
  readonly ratio: string;
  readonly target: string;
  readonly pass: boolean;
  readonly note?: string;
}

export interface Benchmark {
  readonly name: string;
  run(options: BenchOptions): Promise<Row[]>;
}

// ---------------------------------------------------------------------------------------------------
// Files

let workDir: string | null = null;
let fileCount = 0;

/** A temp folder for this run, removed by `cleanUp`. */
export function benchDir(): string {
  workDir ??= mkdtempSync(join(tmpdir(), 'runledger-bench-'));
  return workDir;
}

export function cleanUp(): void {
  if (workDir) rmSync(workDir, { recursive: true, force: true });
  workDir = null;
}

/** A path for a new, not yet existing log file. */
export function freshPath(label: string): string {
  return join(benchDir(), `${label}-${++fileCount}.db`);
}

export function removeLog(path: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(path + suffix, { force: true });
}

/**
 * A new, empty log opened exactly as the product opens one (WAL, busy timeout, `synchronous`, migrated
 * schema with its unique index and append-only triggers). Baselines use `store.db`, the same
 * connection with the same pragmas, so both sides write the same table the same way.
 */
export async function freshStore(label: string, sync: Sync): Promise<{ store: SqliteEventStore; path: string }> {
  const path = freshPath(label);
  const store = await openSqliteStore(path, { sync, writer: 'bench:1', codec: counterCodec });
  return { store, path };
}

/**
 * A fresh store whose connection a raw baseline writes through by hand, syncing as SQLite itself does
 * for `sync` (FULL: an fsync in each commit, on the main thread), not as the store does (its own fsync
 * of `--sync full` is off the connection: see WalSync).
 */
export async function baselineStore(label: string, sync: Sync): Promise<{ store: SqliteEventStore; path: string }> {
  const fresh = await freshStore(label, sync);
  fresh.store.db.pragma(`synchronous = ${sync === 'full' ? 'FULL' : 'NORMAL'}`);
  return fresh;
}

export async function disposeStore(store: SqliteEventStore, path: string): Promise<void> {
  await store.close();
  removeLog(path);
}

// ---------------------------------------------------------------------------------------------------
// Measuring

/** Seconds, from a high-resolution clock. */
export function now(): number {
  return performance.now() / 1000;
}

export function gc(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export interface Paired {
  readonly subject: number[];
  readonly baseline: number[];
  /** subject / baseline, per round. */
  readonly ratios: number[];
}

/**
 * Runs `rounds` pairs, alternating which side goes first so drift hits both alike. Each side returns
 * its own rate (work per second), timing only its measured part, not its setup.
 */
export async function paired(
  rounds: number,
  subject: (round: number) => Promise<number>,
  baseline: (round: number) => Promise<number>,
  log?: (line: string) => void,
  warmUp?: { subject: () => Promise<unknown>; baseline: () => Promise<unknown> },
): Promise<Paired> {
  const result: Paired = { subject: [], baseline: [], ratios: [] };
  if (warmUp) {
    // Untimed: lets the JIT settle on both sides before the first measured round.
    await warmUp.baseline();
    await warmUp.subject();
  }
  for (let round = 0; round < rounds; round++) {
    let s: number;
    let b: number;
    if (round % 2 === 0) {
      gc();
      b = await baseline(round);
      gc();
      s = await subject(round);
    } else {
      gc();
      s = await subject(round);
      gc();
      b = await baseline(round);
    }
    result.subject.push(s);
    result.baseline.push(b);
    result.ratios.push(s / b);
    log?.(`round ${round + 1}/${rounds}: subject ${rate(s)}, baseline ${rate(b)}, ratio ${(s / b).toFixed(2)}`);
  }
  return result;
}

/** One side of an interleaved benchmark: a fresh log, worked on chunk by chunk. */
export interface Side {
  /** Does chunk `index` of the work; only this is timed. */
  chunk(index: number): Promise<void> | void;
  /** Checks the result and removes the log. */
  finish(): Promise<void>;
}

/**
 * Like `paired`, but each round opens both sides on fresh logs and alternates them chunk by chunk
 * (ABBA order), so that a burst of load from another process hits both alike. Rates are work units
 * per second over all chunks of the round.
 */
export async function interleaved(
  rounds: number,
  chunks: number,
  unitsPerChunk: number,
  open: { subject: () => Promise<Side>; baseline: () => Promise<Side> },
  log?: (line: string) => void,
  warmUpChunks = 1,
): Promise<Paired> {
  const result: Paired = { subject: [], baseline: [], ratios: [] };
  for (let round = -1; round < rounds; round++) {
    const warmUp = round < 0;
    const sides = [await open.baseline(), await open.subject()] as const;
    const spent = [0, 0];
    const n = warmUp ? warmUpChunks : chunks;
    gc();
    for (let c = 0; c < n; c++) {
      const order = (c + (round & 1)) % 2 === 0 ? [0, 1] : [1, 0];
      for (const which of order) {
        const start = now();
        await sides[which]!.chunk(c);
        spent[which]! += now() - start;
      }
    }
    for (const side of sides) await side.finish();
    if (warmUp) continue; // untimed: lets the JIT settle on both sides first
    const b = (n * unitsPerChunk) / spent[0]!;
    const s = (n * unitsPerChunk) / spent[1]!;
    result.subject.push(s);
    result.baseline.push(b);
    result.ratios.push(s / b);
    log?.(`round ${round + 1}/${rounds}: subject ${rate(s)}, baseline ${rate(b)}, ratio ${(s / b).toFixed(2)}`);
  }
  return result;
}

/** A ratio row, judged on the median of the per-round ratios. */
export function ratioRow(benchmark: string, unit: string, p: Paired, target: number, note?: string): Row {
  const ratio = median(p.ratios);
  const low = Math.min(...p.ratios);
  const high = Math.max(...p.ratios);
  return {
    benchmark,
    subject: `${rate(median(p.subject))} ${unit}`,
    baseline: `${rate(median(p.baseline))} ${unit}`,
    ratio: `${formatRatio(ratio)} (${formatRatio(low)}–${formatRatio(high)})`,
    target: `≥ ${formatRatio(target)}`,
    pass: ratio >= target,
    ...(note ? { note } : {}),
  };
}

export function formatRatio(r: number): string {
  return r >= 10 ? `${r.toFixed(1)}x` : r.toFixed(2);
}

/** 41234 -> "41.2k". */
export function rate(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  if (n >= 1e6) return `${(n / 1e6).toFixed(2)}M`;
  if (n >= 1e4) return `${(n / 1e3).toFixed(1)}k`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(2)}k`;
  return n.toFixed(0);
}

export function progress(name: string): (line: string) => void {
  return (line) => process.stderr.write(`  [${name}] ${line}\n`);
}

/** A deterministic PRNG (mulberry32), so generated logs are the same every run. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function yieldToLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

// ---------------------------------------------------------------------------------------------------
// Output

export function printTable(rows: readonly Row[]): void {
  const header = ['benchmark', 'subject (median)', 'baseline (median)', 'ratio (min–max)', 'target', 'result'];
  const cells = rows.map((r) => [r.benchmark, r.subject, r.baseline, r.ratio, r.target, r.pass ? 'PASS' : 'FAIL']);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: readonly string[]): string =>
    c
      .map((x, i) => x.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const c of cells) console.log(line(c));
  const notes = rows.filter((r) => r.note);
  if (notes.length) {
    console.log('');
    for (const r of notes) console.log(`- ${r.benchmark}: ${r.note}`);
  }
}

/**
 * Runs `main` with the command line's arguments when `moduleUrl` is the script node was started
 * with (`npx tsx bench/scheduling.ts`), and exits with its code; imported by `bench/index.ts`, nothing.
 */
export function runIfMain(moduleUrl: string, main: (argv: string[]) => Promise<number>): void {
  if (!process.argv[1] || moduleUrl !== pathToFileURL(process.argv[1]).href) return;
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error) => {
      console.error(error);
      process.exit(2);
    },
  );
}
