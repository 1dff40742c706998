/**
 * 9. The PostgreSQL store against raw `pg` on the same throwaway cluster (fsync on, synchronous_commit
 * on: commits as a real server makes them), or on RUNLEDGER_BENCH_PG_URL's server. Each side gets a
 * fresh schema. Batched: 1,000 events an append against one raw transaction (version check, one
 * multi-row INSERT). Group commit: 200 actors appending at once against one raw transaction a
 * decision. Single: one append at a time, each awaited, against one raw transaction each.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { EventStore } from '../runtime/store/eventStore.ts';
import { openPostgresStore } from '../runtime/store/postgres/postgresEventStore.ts';
import { createSchemaLog } from '../runtime/store/postgres/schemaLog.ts';
import { counterCodec } from '../test/fixtures/counter/counterEvents.ts';
import { startPostgresCluster } from '../test/support/postgresCluster.ts';
import { type Benchmark, now, paired, progress, type Row, ratioRow } from './harness.ts';

const AT = 1_700_000_000_000;
const INSERT = `INSERT INTO events (seq, stream, version, type, data, at, cause, actor)
  SELECT s, $2, v, 'counter.bumped', d, $3, NULL, 'bench:1' FROM unnest($1::bigint[], $4::int[], $5::text[]) AS r(s, v, d)`;

/** A fresh log (a schema of its own) on the server at `url`: its URL. */
function freshLog(url: string): Promise<string> {
  return createSchemaLog(url, `bench_${randomBytes(4).toString('hex')}`);
}

async function openStore(url: string): Promise<EventStore> {
  return openPostgresStore(await freshLog(url), { codec: counterCodec, writer: 'bench:1' });
}

/** Raw pg on a migrated log: a version check and one INSERT of `count` rows, in one transaction. */
async function rawClient(url: string) {
  const logUrl = await freshLog(url);
  await (await openPostgresStore(logUrl, { codec: counterCodec })).close();
  const client = new pg.Client({ connectionString: logUrl });
  await client.connect();
  let head = 0;
  return {
    async transaction(stream: string, expected: number, count: number): Promise<void> {
      await client.query('BEGIN');
      const { rows } = await client.query<{ v: number }>('SELECT coalesce(max(version), 0)::int AS v FROM events WHERE stream = $1', [stream]);
      if (rows[0]!.v !== expected) throw new Error(`stale: ${stream} at ${rows[0]!.v}, not ${expected}`);
      const seqs = Array.from({ length: count }, (_, i) => head + i + 1);
      const versions = seqs.map((_, i) => expected + i + 1);
      await client.query({
        name: 'raw_insert',
        text: INSERT,
        values: [seqs, stream, AT, versions, versions.map((v) => JSON.stringify({ total: v }))],
      });
      await client.query('COMMIT');
      head += count;
    },
    close: () => client.end(),
  };
}

async function batchedSubject(url: string, appends: number): Promise<number> {
  const store = await openStore(url);
  const start = now();
  for (let a = 0; a < appends; a++) {
    const events = Array.from({ length: 1000 }, (_, i) => ({
      stream: 'counter:b',
      type: 'counter.bumped',
      data: { total: a * 1000 + i + 1 },
      at: AT,
    }));
    const result = await store.append({ expected: { 'counter:b': a * 1000 }, events });
    if (!result.ok) throw result.conflict;
  }
  const rate = (appends * 1000) / (now() - start);
  await store.close();
  return rate;
}

async function batchedBaseline(url: string, appends: number): Promise<number> {
  const raw = await rawClient(url);
  const start = now();
  for (let a = 0; a < appends; a++) await raw.transaction('counter:b', a * 1000, 1000);
  const rate = (appends * 1000) / (now() - start);
  await raw.close();
  return rate;
}

async function groupSubject(url: string, actors: number, perActor: number): Promise<number> {
  const store = await openStore(url);
  const start = now();
  await Promise.all(
    Array.from({ length: actors }, async (_, id) => {
      const stream = `counter:actor-${id}`;
      for (let v = 0; v < perActor; v++) {
        const result = await store.append({
          expected: { [stream]: v },
          events: [{ stream, type: 'counter.bumped', data: { total: v + 1 }, at: AT }],
        });
        if (!result.ok) throw result.conflict;
      }
    }),
  );
  const rate = (actors * perActor) / (now() - start);
  await store.close();
  return rate;
}

async function singleSubject(url: string, count: number): Promise<number> {
  const store = await openStore(url);
  const start = now();
  for (let v = 0; v < count; v++) {
    const result = await store.append({
      expected: { 'counter:s': v },
      events: [{ stream: 'counter:s', type: 'counter.bumped', data: { total: v + 1 }, at: AT }],
    });
    if (!result.ok) throw result.conflict;
  }
  const rate = count / (now() - start);
  await store.close();
  return rate;
}

/** One raw transaction a decision, one after another (what the store's group commit saves). */
async function oneByOneBaseline(url: string, count: number): Promise<number> {
  const raw = await rawClient(url);
  const start = now();
  for (let v = 0; v < count; v++) await raw.transaction(`counter:actor-${v % 50}`, Math.floor(v / 50), 1);
  const rate = count / (now() - start);
  await raw.close();
  return rate;
}

export const postgresAppends: Benchmark = {
  name: 'postgresAppends',
  async run(options): Promise<Row[]> {
    const given = process.env.RUNLEDGER_BENCH_PG_URL;
    const cluster = given ? null : await startPostgresCluster({ durable: true });
    const url = given ?? cluster!.url;
    try {
      const appends = options.quick ? 5 : 20;
      const [actors, perActor] = options.quick ? [50, 5] : [200, 10];
      const singles = options.quick ? 100 : 500;
      const log = progress('postgresAppends');
      const batched = await paired(
        options.rounds,
        () => batchedSubject(url, appends),
        () => batchedBaseline(url, appends),
        log,
      );
      const group = await paired(
        options.rounds,
        () => groupSubject(url, actors, perActor),
        () => oneByOneBaseline(url, Math.min(actors * perActor, 500)),
        log,
      );
      const single = await paired(
        options.rounds,
        () => singleSubject(url, singles),
        () => oneByOneBaseline(url, singles),
        log,
      );
      return [
        ratioRow(
          `9a. PostgreSQL batched appends, 1000/tx (${appends} tx)`,
          'ev/s',
          batched,
          0.5,
          'against raw pg: one transaction, a version check and one multi-row INSERT',
        ),
        ratioRow(
          `9b. PostgreSQL group commit (${actors * perActor} decisions, ${actors} actors)`,
          'dec/s',
          group,
          3,
          'against raw pg: one transaction (version check, INSERT, COMMIT) a decision',
        ),
        ratioRow(`9c. PostgreSQL single appends, each awaited (${singles})`, 'ev/s', single, 0.5, 'against raw pg: one transaction each'),
      ];
    } finally {
      cluster?.stop();
    }
  },
};
