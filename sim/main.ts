/**
 * `npm run sim -- [--seeds N | --seed S] [--steps K] [--faults LIST] [--size small|normal] [--boards 1|2 [--postgres URL]] [--computers N] [--json]`:
 * plays seeded worlds (a board, or two on one shared log, simulated or on a real PostgreSQL database; two or three
 * computers, or N, agents, a workload, faults) on the real code
 * with simulated edges, checking the invariants after every step. Exit 0 when every world held, 1 when
 * one broke an invariant (its seed, the invariant and the shortest history are printed), 2 on bad usage.
 */
import { parseArgs } from 'node:util';
import { createSchemaLog, dropSchemaLog } from '../runtime/store/postgres/schemaLog.ts';
import { FAULT_KINDS, type Fault, parseFaults } from './faults.ts';
import { formatFailure, formatSummary, type RunOptions, runSeeds } from './report.ts';

function usage(message: string): never {
  process.stderr.write(
    `sim: ${message}\nusage: npm run sim -- [--seeds N | --seed S] [--steps K] [--faults ${FAULT_KINDS.join(',')}|all|none] [--size small|normal] [--boards 1|2] [--postgres URL] [--computers N] [--json] [--no-shrink] [--plan JSON --runs I,J]\n`,
  );
  process.exit(2);
}

/**
 * Each world's log a schema of its own in the database at `url` (one the user may create schemas in),
 * dropped once the world held; a failed world's is kept, and named, to be read.
 */
function postgresLogs(url: string): NonNullable<RunOptions['postgres']> {
  const schemas = new Map<string, string>();
  return {
    fresh: async (seed) => {
      const schema = `sim_${seed}_${process.pid}_${Date.now().toString(36)}`;
      const log = await createSchemaLog(url, schema);
      schemas.set(log, schema);
      return log;
    },
    done: async (log, held) => {
      if (held) await dropSchemaLog(url, schemas.get(log)!);
      else process.stderr.write(`sim: the failed world's log is kept in schema ${schemas.get(log)} of ${url}\n`);
    },
  };
}

let values: ReturnType<typeof parse>['values'];
function parse() {
  return parseArgs({
    options: {
      seeds: { type: 'string' },
      seed: { type: 'string' },
      from: { type: 'string' },
      steps: { type: 'string' },
      faults: { type: 'string' },
      size: { type: 'string' },
      boards: { type: 'string' },
      postgres: { type: 'string' },
      computers: { type: 'string' },
      json: { type: 'boolean' },
      'no-shrink': { type: 'boolean' },
      plan: { type: 'string' },
      runs: { type: 'string' },
    },
    strict: true,
  });
}
try {
  ({ values } = parse());
} catch (error) {
  usage((error as Error).message);
}
const count = (name: string, text: string | undefined, fallback: number) => {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0) usage(`--${name} must be a whole number, got ${JSON.stringify(text)}`);
  return n;
};
if (values.seeds !== undefined && values.seed !== undefined) usage('give --seeds N or --seed S, not both');
const size = values.size ?? 'normal';
if (size !== 'small' && size !== 'normal') usage(`--size must be small or normal, got ${JSON.stringify(size)}`);
const boards = values.boards ?? '1';
if (boards !== '1' && boards !== '2') usage(`--boards must be 1 or 2, got ${JSON.stringify(boards)}`);
if (values.postgres !== undefined && boards !== '2') usage('--postgres plays two boards on one PostgreSQL log: give --boards 2 with it');
const computers = values.computers === undefined ? undefined : count('computers', values.computers, 0);
if (computers !== undefined && (computers < 1 || computers > 200)) usage(`--computers must be 1 to 200, got ${computers}`);
let faults: ReturnType<typeof parseFaults>;
try {
  faults = parseFaults(values.faults ?? 'all');
} catch (error) {
  usage((error as Error).message);
}
const seeds =
  values.seed !== undefined
    ? [count('seed', values.seed, 0)]
    : Array.from({ length: count('seeds', values.seeds, 20) }, (_, i) => count('from', values.from, 1) + i);
let plan: Fault[] | undefined;
if (values.plan !== undefined) {
  try {
    plan = JSON.parse(values.plan) as Fault[];
    if (!Array.isArray(plan)) throw new Error('not a list');
  } catch (error) {
    usage(`--plan must be the JSON list of faults a failure report prints (${(error as Error).message})`);
  }
}
const keepRuns = values.runs === undefined ? undefined : values.runs.split(',').map((r) => count('runs', r, 0));
const summary = await runSeeds(seeds, {
  ...(plan ? { plan } : {}),
  ...(keepRuns ? { keepRuns } : {}),
  faults,
  size,
  boards: boards === '2' ? 2 : 1,
  ...(computers !== undefined ? { computers } : {}),
  ...(values.steps !== undefined ? { steps: count('steps', values.steps, 0) } : {}),
  shrink: !values['no-shrink'],
  ...(values.postgres === undefined ? {} : { postgres: postgresLogs(values.postgres) }),
  progress: values.json ? undefined : (line) => process.stderr.write(`${line}\n`),
});
if (values.json) process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
else {
  process.stdout.write(`${formatSummary(summary)}\n`);
  if (summary.failure) process.stdout.write(`${formatFailure(summary.failure)}\n`);
}
// Worlds leave nothing running that matters, but a dead life's promises may still hold nact's structures: exit now.
process.exit(summary.failure ? 1 : 0);
