import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A throwaway PostgreSQL cluster for the tests: Debian's server binaries (the `postgresql` package,
 * which `.ci/run` installs where missing), an `initdb` into a temp folder, a free port on 127.0.0.1,
 * `pg_ctl -w start`, and, on stop, `pg_ctl stop -m immediate` and the folder removed. PostgreSQL
 * refuses to run as root, so as root it is run as the `postgres` user (the folder given to it).
 * Durability is off (`fsync`, `synchronous_commit`) unless `durable`: a test cluster lives for one run.
 */
export interface PostgresCluster {
  /** `postgres://…/postgres`: the maintenance database, where the tests create theirs. */
  readonly url: string;
  stop(): void;
}

const BIN_ROOT = '/usr/lib/postgresql';

/** The folder of `initdb`, `pg_ctl` and `postgres`: the newest installed major version. */
export function postgresBinaries(): string {
  const versions = existsSync(BIN_ROOT)
    ? readdirSync(BIN_ROOT)
        .filter((v) => existsSync(join(BIN_ROOT, v, 'bin', 'pg_ctl')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  const newest = versions[0];
  if (newest === undefined) {
    throw new Error(
      `no PostgreSQL server binaries under ${BIN_ROOT}: install Debian's postgresql package (apt-get install postgresql), or set RUNLEDGER_TEST_PG_URL to a server the tests may create databases on`,
    );
  }
  return join(BIN_ROOT, newest, 'bin');
}

const PREFIX = 'runledger-pg-';
const OWNER = 'owner.pid';

export async function startPostgresCluster(options: { durable?: boolean } = {}): Promise<PostgresCluster> {
  const bin = postgresBinaries();
  stopAbandoned(bin);
  const dir = mkdtempSync(join(tmpdir(), PREFIX));
  writeFileSync(join(dir, OWNER), String(process.pid));
  const data = join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  // As root, the cluster's files belong to `postgres`, who runs the binaries.
  const run = (tool: string, args: readonly string[]) => {
    const command = asRoot ? ['runuser', ['-u', 'postgres', '--', join(bin, tool), ...args]] : [join(bin, tool), args];
    return execFileSync(command[0] as string, command[1] as string[], { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  };
  if (asRoot) {
    const { uid, gid } = postgresUser();
    chownSync(dir, uid, gid);
  }
  chmodSync(dir, 0o700);
  try {
    run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale', 'C']);
    const port = await freePort();
    writeFileSync(
      join(data, 'postgresql.auto.conf'),
      [
        `port = ${port}`,
        "listen_addresses = '127.0.0.1'",
        // Its socket in its own folder, not /var/run/postgresql (which may not exist or be another cluster's).
        `unix_socket_directories = '${dir}'`,
        // A bench measures commits as a server on a real disk makes them; a test run needs none of that.
        ...(options.durable ? [] : ['fsync = off', 'synchronous_commit = off', 'full_page_writes = off']),
        'max_connections = 200',
        'shared_buffers = 32MB',
        '',
      ].join('\n'),
    );
    if (asRoot) {
      const { uid, gid } = postgresUser();
      chownSync(join(data, 'postgresql.auto.conf'), uid, gid);
    }
    run('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-w', '-t', '30', 'start']);
    let stopped = false;
    return {
      url: `postgres://postgres@127.0.0.1:${port}/postgres`,
      stop() {
        if (stopped) return;
        stopped = true;
        try {
          run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      },
    };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    const stderr = (error as { stderr?: string }).stderr;
    throw new Error(`could not start a throwaway PostgreSQL in ${dir}: ${stderr?.trim() || (error as Error).message}`);
  }
}

/**
 * Stops `cluster` when this process ends: on its exit, and on a signal that would end it without one
 * (SIGTERM from `timeout` or a cancelled CI job, SIGINT, SIGHUP), after which the signal is raised again.
 * Returns the undoing, for a run that stops the cluster itself.
 */
const ENDING_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

export function stopOnExit(cluster: PostgresCluster): () => void {
  const stop = () => cluster.stop();
  // Node ends on these without an 'exit' event: the server would outlive the run (until the next run's stopAbandoned).
  const onSignal = (signal: NodeJS.Signals) => {
    undo();
    try {
      stop();
    } finally {
      process.kill(process.pid, signal);
    }
  };
  const undo = () => {
    process.removeListener('exit', stop);
    for (const signal of ENDING_SIGNALS) process.removeListener(signal, onSignal);
  };
  process.once('exit', stop);
  for (const signal of ENDING_SIGNALS) process.once(signal, onSignal);
  return undo;
}

/**
 * Clusters of earlier runs whose process is gone (killed before its teardown): stopped and removed, so
 * a crash leaves no server running past the next run.
 */
function stopAbandoned(bin: string): void {
  for (const name of readdirSync(tmpdir())) {
    if (!name.startsWith(PREFIX)) continue;
    const dir = join(tmpdir(), name);
    let owner: number;
    try {
      owner = Number(readFileSync(join(dir, OWNER), 'utf8'));
    } catch {
      continue;
    }
    if (alive(owner)) continue;
    const asRoot = process.getuid?.() === 0;
    const stop = [join(bin, 'pg_ctl'), '-D', join(dir, 'data'), '-m', 'immediate', '-w', 'stop'];
    spawnSync(asRoot ? 'runuser' : stop[0]!, asRoot ? ['-u', 'postgres', '--', ...stop] : stop.slice(1), { stdio: 'ignore' });
    rmSync(dir, { recursive: true, force: true });
  }
}

function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function postgresUser(): { uid: number; gid: number } {
  const id = (flag: string) => spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' });
  const uid = id('-u');
  const gid = id('-g');
  if (uid.status !== 0 || gid.status !== 0) {
    throw new Error('the tests run as root, and PostgreSQL will not: there is no user `postgres` to run it as (install the postgresql package)');
  }
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
