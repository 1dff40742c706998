/**
 * 3. Group commit under synchronous=FULL. 1,000 actors, one stream each, all running at once: each
 * appends its next decision (one event, at its expected version) as soon as its previous append
 * resolved, so the appends made in one turn of the event loop share one transaction and one fsync.
 * Baseline: what the log would cost without group commit, one FULL transaction (version check +
 * INSERT + fsync) per decision, by raw better-sqlite3.
 */
import { StaleVersionError } from '../runtime/store/eventStore.ts';
import { type Benchmark, baselineStore, disposeStore, freshStore, now, paired, progress, type Row, ratioRow } from './harness.ts';

const AT = 1_700_000_000_000;

interface Size {
  readonly actors: number;
  readonly perActor: number;
}

const streamOf = (actor: number): string => `counter:actor-${actor}`;

async function subject({ actors, perActor }: Size): Promise<{ rate: number; transactions: number }> {
  const { store, path } = await freshStore('group-subject', 'full');
  try {
    const turnsWithCommits = new Set<number>();
    const actor = async (id: number): Promise<void> => {
      const stream = streamOf(id);
      for (let v = 0; v < perActor; v++) {
        const result = await store.append({
          expected: { [stream]: v },
          events: [{ stream, type: 'counter.bumped', data: { total: v + 1 }, at: AT + v }],
        });
        if (!result.ok) throw result.conflict;
        // Appends of one transaction resolve in the same flush: count the turns in which some resolved.
        turnsWithCommits.add(turn);
      }
    };
    // Numbers the turns of the event loop, to count the shared transactions (one flush per turn).
    let turn = 0;
    let ticking = true;
    const tick = (): void => {
      turn++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const start = now();
    await Promise.all(Array.from({ length: actors }, (_, i) => actor(i)));
    const elapsed = now() - start;
    ticking = false;
    const transactions = turnsWithCommits.size;
    const n = store.db.prepare('SELECT count(*) FROM events').pluck().get();
    if (n !== actors * perActor) throw new Error(`expected ${actors * perActor} events, found ${n}`);
    return { rate: (actors * perActor) / elapsed, transactions };
  } finally {
    await disposeStore(store, path);
  }
}

async function baseline({ actors, perActor }: Size): Promise<number> {
  const { store, path } = await baselineStore('group-baseline', 'full');
  try {
    const db = store.db;
    const version = db.prepare<[string], number | null>('SELECT max(version) FROM events WHERE stream = ?').pluck();
    // seq NULL: SQLite assigns max(seq) + 1, safe with another process writing, as the store's seq is.
    const insert = db.prepare('INSERT INTO events (seq, stream, version, type, data, at, cause, actor) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
    const decide = db.transaction((stream: string, expected: number) => {
      const actual = version.get(stream) ?? 0;
      if (actual !== expected) throw new StaleVersionError(stream, expected, actual);
      insert.run(null, stream, expected + 1, 'counter.bumped', JSON.stringify({ total: expected + 1 }), AT + expected, null, 'bench:1');
    });
    const start = now();
    // The same interleaving as the actors produce: round by round, every actor once.
    for (let v = 0; v < perActor; v++) {
      for (let a = 0; a < actors; a++) decide.immediate(streamOf(a), v);
    }
    const elapsed = now() - start;
    return (actors * perActor) / elapsed;
  } finally {
    await disposeStore(store, path);
  }
}

export const groupCommit: Benchmark = {
  name: 'groupCommit',
  async run(options): Promise<Row[]> {
    const size: Size = options.quick ? { actors: 100, perActor: 10 } : { actors: 1000, perActor: 10 };
    // One fsync a decision costs the same each time: the baseline's rate is taken over the first
    // 3 decisions of every actor (3,000 transactions), which keeps the full run within its minutes.
    const baselineSize: Size = options.quick ? size : { actors: size.actors, perActor: 3 };
    const transactions: number[] = [];
    const p = await paired(
      options.rounds,
      async () => {
        const r = await subject(size);
        transactions.push(r.transactions);
        return r.rate;
      },
      () => baseline(baselineSize),
      progress('groupCommit'),
      { subject: () => subject({ actors: 100, perActor: 5 }), baseline: () => baseline({ actors: 100, perActor: 2 }) },
    );
    const decisions = size.actors * size.perActor;
    return [
      ratioRow(
        `3. group commit, FULL (${decisions} decisions, ${size.actors} actors)`,
        'dec/s',
        p,
        10,
        `the subject committed its ${decisions} decisions in at most ${Math.max(...transactions)} shared transactions a round` +
          ` (event-loop turns in which appends resolved); the baseline's rate is over ${baselineSize.actors * baselineSize.perActor} decisions, one FULL transaction each.`,
      ),
    ];
  },
};
