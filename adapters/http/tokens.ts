import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { crypto } from '../../runtime/lazyBuiltins.ts';

/**
 * Secrets stay out of the log: computer tokens are stored as hashes, run tokens are derived from a
 * board secret kept in a 0600 file beside the database, and the submit token lives in `<folder>/token`.
 */
export function newToken(): string {
  return crypto().randomBytes(32).toString('base64url');
}

/** Tokens are 256 random bits, so a plain SHA-256 is enough to keep them out of the log. */
export function hashToken(token: string): string {
  return crypto().createHash('sha256').update(token).digest('hex');
}

export function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && crypto().timingSafeEqual(x, y);
}

/**
 * A run's token: the same for the same claim every time, so a repeated claim gets it again. `life`
 * binds it to the daemon life that claimed the run (null: a claim that named none, a life of its own),
 * so two daemons joined as one computer never hold each other's tokens; without it (runs claimed before
 * tokens were bound) it is the computer's. Ids have no newline, so the two forms never meet.
 */
export function runToken(boardSecret: string, runId: string, computerId: string, life?: { incarnation: string | null }): string {
  const claim = life === undefined ? `${runId}\n${computerId}` : `bound\n${runId}\n${computerId}\n${life.incarnation ?? ''}`;
  return crypto().createHmac('sha256', boardSecret).update(claim).digest('base64url');
}

/** Reads a secret file, creating it (mode 0600) with a fresh token on first use. */
export function secretFile(path: string): string {
  if (existsSync(path)) return readFileSync(path, 'utf8').trim();
  mkdirSync(dirname(path), { recursive: true });
  const token = newToken();
  writeFileSync(path, `${token}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(path, 0o600);
  return token;
}

export function tokenPaths(dbPath: string): { submitToken: string; boardSecret: string } {
  const folder = dirname(dbPath);
  return { submitToken: join(folder, 'token'), boardSecret: join(folder, 'board.secret') };
}

/**
 * The submit token for CLI commands: `--token`, else the file beside the database, else an error that
 * names the file, the log it is beside and how that log was chosen (`how`: "given with --db", "from RUNLEDGER_HOME=...").
 */
export function readSubmitToken(dbPath: string, explicit?: string, how = 'given with --db'): string {
  if (explicit) return explicit;
  const log = resolve(dbPath);
  const path = tokenPaths(log).submitToken;
  if (!existsSync(path)) {
    throw new Error(
      `no submit token at ${path} (beside the log ${log}, ${how}): no board has started on that log. ` +
        'Give the log of the board you mean (--db FILE, or RUNLEDGER_HOME / RUNLEDGER_DB as its daemon had them), ' +
        'or its token (--token T or RUNLEDGER_TOKEN; `runledger token add NAME` makes one); a board started once on a log creates its file',
    );
  }
  return readFileSync(path, 'utf8').trim();
}
