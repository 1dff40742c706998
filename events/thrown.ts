/**
 * What a thrown value says, for a log line or a refusal. A catch clause holds `unknown`: these read it
 * without a cast, and a value that is not an Error (a thrown string) still says something.
 */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The `code` a Node or SQLite error carries (`ENOENT`, `SQLITE_FULL`), or null when it has none. */
export function codeOf(error: unknown): string | null {
  const code: unknown = typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
  return typeof code === 'string' ? code : null;
}
