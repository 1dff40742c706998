/**
 * 5. `runledger replay` on a 1,000,000-event log of a board and three computers (queue, run and board
 * events of some 35,000 runs, generated through the real deciders):
 *
 * - full verification (`replayLog`: every row read through the store, decoded and validated against
 *   the catalog, every input re-decided and every decision compared), against a raw better-sqlite3
 *   `iterate()` + `JSON.parse` pass over the same rows. Target: at least 0.5x its speed.
 * - `replay --until` near the end of the log, once `rebuild --write` stored snapshots: every projection
 *   as of that seq, and the decisions since the deciders' snapshot re-derived. Target: under 1 s.
 * - `replay --run` of a run near the end, from the same snapshots. Target: under 1 s.
 *
 *   npx tsx bench/replay.ts [--quick] [--rounds N]
 */
import { boardInput } from '../actors/board/boardInputs.ts';
import type { AnyDecider, InputRecall } from '../actors/decider.ts';
import { decideStep } from '../actors/decideStep.ts';
import type { DomainEvent, NewDomainEvent } from '../events/catalog.ts';
import { storedDeciderProjections } from '../replay/deciderStates.ts';
import { deciders } from '../replay/deciders.ts';
import { replayEntity } from '../replay/replayEntity.ts';
import { replayLog } from '../replay/replayLog.ts';
import { replayUntil } from '../replay/replayUntil.ts';
import { hydrateProjections } from '../runtime/folds/hydrate.ts';
import { projections } from '../runtime/folds/keeper/registry.ts';
import { rebuildAndCheck } from '../runtime/folds/snapshot/checkSnapshots.ts';
import { SNAPSHOT_EVERY } from '../runtime/store/sqlite/snapshots.ts';
import { openSqliteStore, type SqliteEventStore } from '../runtime/store/sqlite/sqliteEventStore.ts';
import { type Benchmark, freshPath, median, now, paired, prng, progress, type Row, ratioRow, removeLog, runIfMain } from './harness.ts';

const T0 = Date.UTC(2026, 0, 5, 8, 0, 0);
const COMPUTERS = ['c1', 'c2', 'c3'] as const;
const SLOTS = 4;

interface Pending {
  readonly at: number;
  readonly order: number;
  readonly input: NewDomainEvent;
  /** The seq of a decision another actor takes as its input (a message): it is not written again. */
  readonly message?: number;
}

/** A min-heap of inputs by time (then by the order they were scheduled in). */
class Agenda {
  private readonly heap: Pending[] = [];
  private order = 0;

  add(input: NewDomainEvent, message?: number): void {
    const item = { at: input.at, order: this.order++, input, ...(message === undefined ? {} : { message }) };
    const h = this.heap;
    h.push(item);
    for (let i = h.length - 1; i > 0; ) {
      const parent = (i - 1) >> 1;
      if (!before(h[i]!, h[parent]!)) break;
      [h[i], h[parent]] = [h[parent]!, h[i]!];
      i = parent;
    }
  }

  take(): Pending | undefined {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    if (h.length && last) {
      h[0] = last;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && before(h[l]!, h[m]!)) m = l;
        if (r < h.length && before(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return top;
  }
}

function before(a: Pending, b: Pending): boolean {
  return a.at < b.at || (a.at === b.at && a.order < b.order);
}

type Fate = 'ok' | 'failed' | 'cancelled' | 'lapsed';

/** A decision as written, with its seq: what a message (another decider's input) is decided from. */
type Written = NewDomainEvent & { readonly seq: number };

/**
 * Generates a log as a board and three computers would write it, decision by decision through the
 * real deciders (so it replays), written with raw INSERTs in large transactions. Each decision's
 * effect is the next input (a pushed frame, a claim over the wire, a spawned process): runs are
 * submitted every few seconds to 3,000 lanes (a few of them busy), pushed, claimed (3 % meet a 503
 * and retry, a lane's later turn may be told `conversation_busy` and park), run for 5 to 60 s, and
 * most succeed; some fail, are cancelled by their user, or lapse and are reaped.
 */
export async function generateReplayLog(total: number, seed = 7): Promise<{ path: string; head: number; runs: number }> {
  const path = freshPath('replay');
  const store = await openSqliteStore(path, { sync: 'normal', writer: 'bench:1' });
  const db = store.db;
  const insert = db.prepare('INSERT INTO events (seq, stream, version, type, data, at, cause, actor) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
  const random = prng(seed);
  const agenda = new Agenda();
  const states = new Map<string, unknown>();
  const versions = new Map<string, number>();
  const deciderOf = new Map<string, AnyDecider>();
  const sessions = new Map<string, string>();
  const fates = new Map<string, Fate>();
  let seq = 0;
  let runs = 0;
  let frames = 0;
  let nextSubmit = T0 + 2_000;

  const write = (event: NewDomainEvent, cause: number | null): number => {
    const version = (versions.get(event.stream) ?? 0) + 1;
    versions.set(event.stream, version);
    insert.run(++seq, event.stream, version, event.type, JSON.stringify(event.data), event.at, cause, 'bench:1');
    return seq;
  };
  /** A committed decision another decider takes as its input: only what it decides is written, caused by it. */
  const stepMessage = (message: NewDomainEvent, seqOf: number): readonly Written[] | null => {
    const decider = deciders.find((d) => d.messageScopeOf?.({ ...message, seq: seqOf } as DomainEvent) != null)!;
    const scope = decider.messageScopeOf!({ ...message, seq: seqOf } as DomainEvent)!;
    const key = `${decider.name} ${scope}`;
    const result = decideStep(decider, states.has(key) ? states.get(key) : decider.initialState(scope), message, true);
    if (!result) return null;
    states.set(key, result.state);
    return result.decisions.map((decision) => ({ ...decision, seq: write(decision, seqOf) }));
  };
  const step = (input: NewDomainEvent): readonly Written[] | null => {
    let decider = deciderOf.get(input.type);
    if (!decider) {
      decider = deciders.find((d) => d.isInput(input) && d.scopeOf(input) !== null);
      if (!decider) throw new Error(`no decider takes ${input.type}`);
      deciderOf.set(input.type, decider);
    }
    const scope = decider.scopeOf(input)!;
    const key = `${decider.name} ${scope}`;
    const state = states.has(key) ? states.get(key) : decider.initialState(scope);
    // A request about a run that settled records the run's end, as the host reads it from the log.
    const recall = recallOf(decider);
    const recorded = recall ? recall.fill(state, input, seq + 1) : input;
    const result = decideStep(decider, state, recorded);
    if (!result) return null;
    states.set(key, result.state);
    const cause = write(recorded, null);
    recall?.note({ ...recorded, seq: cause } as DomainEvent);
    return result.decisions.map((decision) => {
      const written = write(decision, cause);
      recall?.note({ ...decision, seq: written } as DomainEvent);
      return { ...decision, seq: written };
    });
  };
  const recalls = new Map<AnyDecider, InputRecall<unknown, NewDomainEvent> | null>();
  const recallOf = (decider: AnyDecider): InputRecall<unknown, NewDomainEvent> | null => {
    if (!recalls.has(decider)) recalls.set(decider, decider.recall?.() ?? null);
    return recalls.get(decider)!;
  };

  const later = (input: NewDomainEvent, ms: number): void => agenda.add({ ...input, at: input.at + ms } as NewDomainEvent);
  const frame = (c: string, runId: string, lane: string, at: number): NewDomainEvent => ({
    stream: `${c}/lane:${lane}`,
    type: 'frame.received',
    data: { frameId: `f${++frames}`, kind: 'run.requested', runId, lane, computerId: c },
    at,
  });
  const submit = (): void => {
    const runId = `r${++runs}`;
    // A few lanes are busy, most are quiet.
    const lane = `L${Math.floor(random() ** 2 * 3000)}`;
    const roll = random();
    fates.set(runId, roll < 0.9 ? 'ok' : roll < 0.96 ? 'failed' : roll < 0.98 ? 'cancelled' : 'lapsed');
    agenda.add(
      boardInput.submitted(
        { runId, lane, prompt: `turn ${runId} of lane ${lane}: carry on with the plan`, agentId: null, timeoutS: 3600 },
        nextSubmit,
      ),
    );
    nextSubmit += 500 + Math.floor(random() * 5_000);
  };

  /** What the world does after each decision: the next inputs, at their times. */
  const effects = (input: NewDomainEvent, decisions: readonly Written[]): void => {
    const at = input.at;
    for (const d of decisions) {
      switch (d.type) {
        case 'board.run.offered':
          for (const c of d.data.computers) agenda.add(frame(c, d.data.runId, d.data.lane, at + 5));
          break;
        case 'board.run.cancelled':
          for (const c of d.data.offeredTo) {
            agenda.add({
              stream: `${c}/computer:${c}`,
              type: 'frame.received',
              data: { frameId: `x${++frames}`, kind: 'run.cancelled', runId: d.data.runId },
              at: at + 5,
            });
          }
          break;
        case 'run.claim.started': {
          const c = d.stream.slice(0, d.stream.indexOf('/'));
          if (random() < 0.03) later({ stream: d.stream, type: 'claim.answered', data: { runId: d.data.runId, status: 503 }, at }, 50);
          else agenda.add(boardInput.claim(d.data.runId, c, at + 10));
          break;
        }
        case 'run.claim.retrying':
        case 'run.parked':
          agenda.add({ stream: d.stream, type: 'timer.fired', data: { runId: d.data.runId }, at: d.data.notBefore });
          break;
        // The run starts from its queue's claim, and its queue frees the lane from its settle: each the
        // other actor's input as committed (a message), not an input written again.
        case 'run.claimed':
          agenda.add(d, d.seq);
          break;
        case 'run.execution.requested':
          spawn(d.stream, d.data.runId, d.data.resume, at);
          break;
        case 'run.completion.requested': {
          const c = d.stream.slice(0, d.stream.indexOf('/'));
          const { ok, error } = d.data.result;
          agenda.add(boardInput.completion(d.data.runId, c, ok, error, at + 20));
          break;
        }
        case 'run.settled':
          agenda.add(d, d.seq);
          break;
        case 'lane.session.remembered':
          sessions.set(`${d.stream.slice(0, d.stream.indexOf('/'))}/${d.data.lane}`, d.data.sessionId);
          break;
        case 'lane.session.forgotten':
          sessions.delete(`${d.stream.slice(0, d.stream.indexOf('/'))}/${d.data.lane}`);
          break;
        default:
          break;
      }
    }
    // A claim over the wire: the computer records the board's answer.
    if (input.type === 'board.claim.requested' && decisions.length) {
      const answer = decisions[0]!;
      const { runId, computerId } = input.data;
      const lane = laneOf.get(runId) ?? 'L0';
      const stream = `${computerId}/lane:${lane}`;
      const claimed = answer.type === 'board.run.claimed' || answer.type === 'board.request.repeated';
      // What the host reads for the run's start is recorded with the answer.
      const start = { budgetS: 3600, laneSession: sessions.get(`${computerId}/${lane}`) ?? null };
      const data = claimed
        ? { runId, status: 200, skills: [], run: { prompt: `turn ${runId}`, agentId: null, timeoutS: 3600 }, start }
        : answer.type === 'board.request.refused'
          ? { runId, status: answer.data.status, code: answer.data.code }
          : null;
      if (data) agenda.add({ stream, type: 'claim.answered', data, at: at + 10 } as NewDomainEvent);
    }
    if (input.type === 'board.run.submitted') laneOf.set(input.data.runId, input.data.lane);
    // The holder learns its run's end from the board's answer to its completion.
    if (input.type === 'board.completion.received') {
      const answer = decisions[0];
      const status = answer?.type === 'board.run.finished' ? 200 : answer?.type === 'board.request.refused' ? answer.data.status : 200;
      agenda.add({
        stream: `${input.data.computerId}/run:${input.data.runId}`,
        type: 'run.completion.answered',
        data: { runId: input.data.runId, status },
        at: at + 10,
      });
    }
  };
  const laneOf = new Map<string, string>();

  /** A spawned agent: it begins, maybe names its session, and meets its fate after 5 to 60 s. */
  const spawn = (stream: string, runId: string, resume: string | null, at: number): void => {
    const c = stream.slice(0, stream.indexOf('/'));
    const pid = 1000 + Math.floor(random() * 60_000);
    const lasts = 2 * (2_500 + Math.floor(random() * 27_500));
    agenda.add({ stream, type: 'run.process.began', data: { runId, pid, resuming: resume }, at: at + 20 });
    if (resume === null && random() < 0.5)
      agenda.add({ stream, type: 'run.session.announced', data: { runId, sessionId: `s-${runId}` }, at: at + 500 });
    agenda.add(boardInput.started(runId, c, at + 1_000));
    const exit = (outcome: 'exited' | 'cancelled' | 'killed', exitCode: number | null, reply: string | null, when: number): NewDomainEvent => ({
      stream,
      type: 'run.process.exited',
      data: {
        runId,
        outcome,
        exitCode,
        signal: exitCode === null ? 'SIGTERM' : null,
        reply,
        tail: '',
        stderrTail: exitCode ? 'Error: the tool failed' : '',
      },
      at: when,
    });
    switch (fates.get(runId)) {
      case 'failed':
        agenda.add(exit('exited', 1, null, at + lasts));
        break;
      case 'cancelled':
        agenda.add(boardInput.cancel(runId, at + lasts / 2));
        agenda.add({ stream, type: 'run.heartbeat.answered', data: { runId, status: 200, cancelRequested: true }, at: at + lasts / 2 + 100 });
        agenda.add(exit('cancelled', null, null, at + lasts / 2 + 300));
        break;
      case 'lapsed':
        agenda.add(boardInput.lapsed(runId, at + 1_000, at + lasts));
        agenda.add({ stream, type: 'run.heartbeat.answered', data: { runId, status: 410, cancelRequested: false }, at: at + lasts + 100 });
        agenda.add(exit('killed', null, null, at + lasts + 200));
        break;
      default: {
        const reply = `Done with ${runId}: the plan moved one step.`;
        agenda.add(boardInput.reply(runId, c, reply, at + lasts - 100));
        agenda.add(exit('exited', 0, reply, at + lasts));
      }
    }
  };

  const flush = db.transaction((work: () => void) => work());
  flush(() => {
    for (const c of COMPUTERS) {
      for (const input of [boardInput.computerAdded(c, `sha256-${c}`, T0), boardInput.connected(c, T0 + 1)]) effects(input, step(input) ?? []);
      step({ stream: `${c}/computer:${c}`, type: 'computer.configured', data: { slots: SLOTS, loginCapacity: {} }, at: T0 + 1 });
    }
  });
  submit();
  while (seq < total) {
    flush(() => {
      const stop = Math.min(total, seq + 20_000);
      while (seq < stop) {
        const next = agenda.take()!;
        // One submission is always due: the next is drawn as this one comes in, so time only moves on.
        if (next.input.type === 'board.run.submitted') submit();
        const decisions = next.message === undefined ? step(next.input) : stepMessage(next.input, next.message);
        if (decisions) effects(next.input, decisions);
      }
    });
  }
  await store.close();
  return { path, head: seq, runs };
}

async function verification(store: SqliteEventStore, head: number): Promise<number> {
  const start = now();
  const report = await replayLog(store, deciders);
  const elapsed = now() - start;
  if (!report.ok) throw new Error(`the generated log does not replay: ${JSON.stringify(report).slice(0, 2000)}`);
  if (report.lastSeq !== head) throw new Error(`replay stopped at seq ${report.lastSeq}, not ${head}`);
  return head / elapsed;
}

async function rawPass(store: SqliteEventStore, head: number): Promise<number> {
  const select = store.db.prepare('SELECT seq, stream, version, type, data, at, cause, actor FROM events ORDER BY seq').raw(true);
  const start = now();
  let rows = 0;
  let last = 0;
  for (const row of select.iterate() as IterableIterator<[number, string, number, string, string, number, number | null, string]>) {
    JSON.parse(row[4]);
    last = row[0];
    rows++;
  }
  const elapsed = now() - start;
  if (rows !== head || last !== head) throw new Error(`the raw pass read ${rows} rows to seq ${last}, not ${head}`);
  return head / elapsed;
}

/** Median seconds of `rounds` calls of `work`. */
async function timed(rounds: number, work: () => Promise<unknown>): Promise<{ median: number; all: number[] }> {
  const all: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const start = now();
    await work();
    all.push(now() - start);
  }
  return { median: median(all), all };
}

export const replay: Benchmark = {
  name: 'replay',
  async run(options): Promise<Row[]> {
    const total = options.quick ? 100_000 : 1_000_000;
    const log = progress('replay');
    let t = now();
    const { path, head, runs } = await generateReplayLog(total);
    log(`generated ${head} events of ${runs} runs on 3 computers in ${(now() - t).toFixed(1)} s`);
    // A snapshot every tenth of the log at most: the quick run's log is shorter than the default interval.
    const store = await openSqliteStore(path, { writer: 'bench:1', snapshots: { every: Math.min(SNAPSHOT_EVERY, Math.floor(head / 10)) } });
    try {
      const p = await paired(
        options.rounds,
        () => verification(store, head),
        () => rawPass(store, head),
        log,
        { subject: () => verification(store, head), baseline: () => rawPass(store, head) },
      );
      t = now();
      const all = [...projections, ...storedDeciderProjections(deciders)];
      const written = await rebuildAndCheck(store, all, { write: true, checkpointed: new Set(projections) });
      if (!written.ok) throw new Error(`rebuild disagrees: ${JSON.stringify(written.firstDifference)}`);
      const writeS = now() - t;
      log(`rebuild --write: snapshots at seq ${written.written!.snapshots.join(', ')} in ${writeS.toFixed(1)} s`);

      const until = head - 1_000;
      const untilRun = await replayUntil(store, deciders, projections, until);
      if (!untilRun.ok) throw new Error(`replay --until disagrees: ${JSON.stringify(untilRun.difference).slice(0, 2000)}`);
      const untilTimes = await timed(options.rounds, () => replayUntil(store, deciders, projections, until));
      log(
        `replay --until ${until}: ${untilRun.folded} events folded, from snapshots at ${[...new Set(untilRun.projectionsFrom.map((s) => s.seq))].join(', ')}; ${untilTimes.all.map((s) => `${(s * 1000).toFixed(0)} ms`).join(', ')}`,
      );

      const runId = `r${runs - 60}`;
      const entity = await replayEntity(store, deciders, 'run', runId);
      if (!entity?.ok) throw new Error(`replay --run ${runId} disagrees: ${JSON.stringify(entity?.difference).slice(0, 2000)}`);
      const runTimes = await timed(options.rounds, () => replayEntity(store, deciders, 'run', runId));
      log(
        `replay --run ${runId}: ${entity.steps.length} inputs, ${entity.folded.events} events folded; ${runTimes.all.map((s) => `${(s * 1000).toFixed(0)} ms`).join(', ')}`,
      );

      const startUp = await timed(options.rounds, () => hydrateProjections(store, projections));
      const size = Number(store.db.prepare('SELECT sum(length(state)) FROM projection_snapshots').pluck().get() ?? 0);
      return [
        ratioRow(
          `5. replay: full verification (${head / 1000}k events)`,
          'ev/s',
          p,
          0.5,
          'raw baseline: better-sqlite3 iterate() + JSON.parse of every row, nothing decided',
        ),
        {
          benchmark: `5b. replay --until ${until} (head ${head})`,
          subject: `${(untilTimes.median * 1000).toFixed(0)} ms`,
          baseline: '-',
          ratio: '-',
          target: '< 1000 ms',
          pass: untilTimes.median < 1,
          note: `${untilRun.folded} events folded past the nearest snapshots, ${untilRun.inputs} inputs re-decided; snapshots by rebuild --write in ${writeS.toFixed(1)} s (${(size / 1e6).toFixed(0)} MB of snapshot history); start-up from checkpoints ${(startUp.median * 1000).toFixed(0)} ms`,
        },
        {
          benchmark: `5c. replay --run ${runId}`,
          subject: `${(runTimes.median * 1000).toFixed(0)} ms`,
          baseline: '-',
          ratio: '-',
          target: '< 1000 ms',
          pass: runTimes.median < 1,
          note: `${entity.steps.length} inputs re-decided, ${entity.folded.events} events folded (scopes ${entity.scopes.map((s) => s.scope).join(', ')})`,
        },
      ];
    } finally {
      await store.close();
      removeLog(path);
    }
  },
};

async function main(argv: readonly string[]): Promise<number> {
  const { parseOptions, printTable, cleanUp } = await import('./harness.ts');
  const options = parseOptions(argv);
  try {
    const rows = await replay.run(options);
    printTable(rows);
    return rows.every((r) => r.pass) ? 0 : 1;
  } finally {
    cleanUp();
  }
}

runIfMain(import.meta.url, main);
