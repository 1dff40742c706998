/**
 * What `--db` (or `RUNLEDGER_DB`) names: a PostgreSQL database when it is a `postgres://` (or
 * `postgresql://`) URL, else a SQLite file. Loads nothing: the CLI's light commands ask it too.
 */
export function isPostgresUrl(db: string): boolean {
  return /^postgres(?:ql)?:\/\//i.test(db);
}

/** The URL as it may be said in a message or a log line: its password left out, in its user part or as a parameter (libpq's `?password=`). */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    for (const key of [...parsed.searchParams.keys()]) if (key.toLowerCase() === 'password') parsed.searchParams.set(key, '***');
    return parsed.toString();
  } catch {
    return 'the PostgreSQL URL given as --db (it does not parse as a URL)';
  }
}
