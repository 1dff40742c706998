/**
 * Restart in time independent of log length (issue 16): the embedded daemon started on a log of a
 * million events (a daemon's real history of a few hundred no-op runs, copied under new run ids with
 * its seqs, versions and times moved on, appended straight into the table) against one started on an
 * empty log: the time until it serves (startDaemon resolved) and until a run submitted then is done.
 * Each log is started once untimed first, so its checkpoints are as a daemon that ran leaves them.
 *
 *   node --expose-gc --import tsx bench/restartTime.ts [--quick] [--events N]
 */
import { cpSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { startDaemon } from '../apps/daemon/startDaemon.ts';
import type { EventRow } from '../events/codec.ts';
import { call, startEmbedded } from './embeddedLoad.ts';
import { type Benchmark, benchDir, median, type Row, runIfMain } from './harness.ts';

const TARGET = 1.5;
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/** A row of the log as stored, copied with its ids, seqs, versions and times moved on. */
type TemplateRow = EventRow;

/** Copies the log's own history until it holds `events` events: each copy's ids, seqs, versions and times moved on. */
export function grow(db: string, events: number): number {
  const sqlite = new Database(db);
  try {
    const rows = sqlite.prepare('SELECT seq, stream, version, type, data, at, cause, actor FROM events ORDER BY seq').all() as TemplateRow[];
    const t = rows.length;
    const span = rows[t - 1]!.at - rows[0]!.at + 1_000;
    const perStream = new Map<string, number>();
    for (const r of rows) perStream.set(r.stream, Math.max(perStream.get(r.stream) ?? 0, r.version));
    const insert = sqlite.prepare('INSERT INTO events (seq, stream, version, type, data, at, cause, actor) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
    const copies = Math.ceil(events / t) - 1;
    const copy = sqlite.transaction((k: number) => {
      const ids = new Map<string, string>();
      const renamed = (text: string) =>
        text.replace(UUID, (id) => {
          let next = ids.get(id);
          if (!next) {
            next = `${id.slice(0, 24)}${(k * 7919 + ids.size).toString(16).padStart(12, '0').slice(-12)}`;
            ids.set(id, next);
          }
          return next;
        });
      const shift = k * t;
      for (const r of rows) {
        const stream = renamed(r.stream);
        // A stream of the template's own (a run's) starts afresh; a shared one (a lane, the board) goes on.
        const version = stream === r.stream ? r.version + k * perStream.get(r.stream)! : r.version;
        const data = JSON.parse(renamed(r.data)) as Record<string, unknown>;
        for (const key of ['through', 'effect', 'source']) if (typeof data[key] === 'number') data[key] = (data[key] as number) + shift;
        if (Array.isArray(data.effects)) data.effects = data.effects.map((e: number) => e + shift);
        insert.run(r.seq + shift, stream, version, r.type, JSON.stringify(data), r.at + k * span, r.cause === null ? null : r.cause + shift, r.actor);
      }
    });
    for (let k = 1; k <= copies; k++) copy(k);
    return t * (copies + 1);
  } finally {
    sqlite.close();
  }
}

/**
 * Waits (bounded) until the computer's queue has settled every run it queued: a run the board finished
 * is ended in the queue a moment later, and a template cut before that would leave, in every copy `grow`
 * makes, one more run running in a shared lane, a history no daemon writes (a loaded machine did so).
 */
async function queueSettled(db: string): Promise<void> {
  const sqlite = new Database(db, { readonly: true, fileMustExist: true });
  try {
    const count = sqlite.prepare<[], { queued: number; settled: number }>(
      `SELECT sum(type = 'run.queued') AS queued, sum(type IN ('run.ended', 'run.skipped', 'run.withdrawn')) AS settled FROM events`,
    );
    for (const deadline = Date.now() + 30_000; ; ) {
      const { queued, settled } = count.get()!;
      if (settled >= queued) return;
      if (Date.now() > deadline) throw new Error(`the template's queue settled ${settled} of its ${queued} runs within 30 s`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    sqlite.close();
  }
}

/** Seconds until the daemon serves, and until a run submitted then is done. */
async function restart(db: string): Promise<{ ready: number; runDone: number }> {
  const started = performance.now();
  const daemon = await startDaemon({ db, port: 0, exec: 'true', slots: 8, budgetNote: false });
  const ready = (performance.now() - started) / 1000;
  try {
    const token = readFileSync(join(db, '..', 'token'), 'utf8').trim();
    const submitted = await call(
      `${daemon.url}/v1/runs`,
      'POST',
      { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      '{"lane":"after","prompt":"hi"}',
    );
    const { run_id } = JSON.parse(submitted.text) as { run_id: string };
    for (;;) {
      const { text } = await call(`${daemon.url}/v1/runs/${run_id}`, 'GET');
      if (/"state":"(succeeded|failed|cancelled|resolved)"/.test(text)) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    return { ready, runDone: (performance.now() - started) / 1000 };
  } finally {
    await daemon.close();
  }
}

export interface RestartFigures {
  readonly events: number;
  readonly large: { ready: number; runDone: number };
  readonly small: { ready: number; runDone: number };
  readonly firstStart: number;
}

export async function measureRestart(
  options: { quick?: boolean; events?: number; rounds?: number } = {},
  log: (line: string) => void = () => {},
): Promise<RestartFigures> {
  const target = options.events ?? (options.quick ? 100_000 : 1_000_000);
  const rounds = options.rounds ?? 3;
  const template = await startEmbedded('restart-template');
  await template.load(300);
  await queueSettled(template.db);
  await template.close();
  // The whole folder: the log, its token files and the computer's.
  const large = join(benchDir(), `restart-large-${Date.now()}`);
  cpSync(dirname(template.db), large, { recursive: true });
  const t = performance.now();
  const events = grow(join(large, 'runledger.db'), target);
  log(`log of ${events} events made in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  const small = join(benchDir(), `restart-small-${Date.now()}`);
  mkdirSync(small, { recursive: true });
  const f = performance.now();
  await restart(join(large, 'runledger.db'));
  const firstStart = (performance.now() - f) / 1000;
  log(`first start on it (untimed in the ratio): ${firstStart.toFixed(1)} s`);
  await restart(join(small, 'runledger.db'));
  const l: { ready: number; runDone: number }[] = [];
  const s: { ready: number; runDone: number }[] = [];
  for (let i = 0; i < rounds; i++) {
    l.push(await restart(join(large, 'runledger.db')));
    s.push(await restart(join(small, 'runledger.db')));
    log(
      `round ${i + 1}: large ready ${l.at(-1)!.ready.toFixed(3)} s, run done ${l.at(-1)!.runDone.toFixed(3)} s; small ${s.at(-1)!.ready.toFixed(3)} s, ${s.at(-1)!.runDone.toFixed(3)} s`,
    );
  }
  const med = (xs: { ready: number; runDone: number }[]) => ({ ready: median(xs.map((x) => x.ready)), runDone: median(xs.map((x) => x.runDone)) });
  return { events, large: med(l), small: med(s), firstStart };
}

export async function runRestartBench(options: { quick?: boolean; events?: number } = {}, log?: (line: string) => void): Promise<Row[]> {
  const f = await measureRestart(options, log);
  const ratio = f.large.runDone / f.small.runDone;
  return [
    {
      benchmark: `restart: embedded daemon in this process, clean stop (fresh checkpoints), on a ${Math.round(f.events / 1000)}k-event log vs an empty one`,
      subject: `${f.large.runDone.toFixed(2)} s to a run done`,
      baseline: `${f.small.runDone.toFixed(2)} s`,
      ratio: ratio.toFixed(2),
      target: `≤ ${TARGET} and < 1 s`,
      pass: ratio <= TARGET && f.large.runDone < 1,
      note: `serving after ${f.large.ready.toFixed(2)} s vs ${f.small.ready.toFixed(2)} s; the first start on the grown log (no checkpoints past the copied history) took ${f.firstStart.toFixed(1)} s`,
    },
  ];
}

export const restartTime: Benchmark = {
  name: 'restartTime',
  run: (options) => runRestartBench({ quick: options.quick }, (line) => process.stderr.write(`  [restartTime] ${line}\n`)),
};

runIfMain(import.meta.url, async (argv) => {
  const at = argv.indexOf('--events');
  const rows = await runRestartBench({ quick: argv.includes('--quick'), ...(at === -1 ? {} : { events: Number(argv[at + 1]) }) }, (line) =>
    process.stderr.write(`  ${line}\n`),
  );
  for (const row of rows)
    console.log(`${row.pass ? 'PASS' : 'FAIL'}  ${row.benchmark}: ${row.subject}, ${row.baseline}, ratio ${row.ratio}\n      ${row.note}`);
  return rows.every((r) => r.pass) ? 0 : 1;
});
