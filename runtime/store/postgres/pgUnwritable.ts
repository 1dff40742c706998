import { codeOf } from '../../../events/thrown.ts';
import { LogUnwritableError, type UnwritableCause } from '../logUnwritable.ts';

/**
 * The cause of a failed read or write when it is the server's or the network's, not the data's: a
 * SQLSTATE class PostgreSQL answers (disk full, read-only, shut down, refused login) or a connection
 * that could not be made or was lost. Such a write may succeed once the server is back, so it is a
 * LogUnwritableError, retried as a full disk is; anything else (a bug, a bad input) stays as it is.
 */
function pgCauseOf(error: unknown): { cause: UnwritableCause; code: string } | null {
  const code = codeOf(error);
  if (code === '53100') return { cause: 'disk_full', code };
  if (code === '25006') return { cause: 'read_only', code };
  if (code === '58030' || code?.startsWith('08') || code?.startsWith('57P') || code === '53300') return { cause: 'io_error', code };
  if (code === '3D000' || code === '3F000') return { cause: 'cannot_open', code };
  if (code === '42501' || code?.startsWith('28')) return { cause: 'not_permitted', code };
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EHOSTUNREACH') return { cause: 'unreachable', code };
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'ETIMEDOUT') return { cause: 'io_error', code };
  // pg says a lost or timed-out connection in words only.
  const message = error instanceof Error ? error.message : '';
  if (
    /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Query read timeout/i.test(
      message,
    )
  ) {
    return { cause: 'io_error', code: 'connection_lost' };
  }
  return null;
}

/** `error` as a LogUnwritableError naming `where` (the URL without its password) when it is the server's or the network's. */
export function asPgUnwritable(error: unknown, where: string): unknown {
  if (error instanceof LogUnwritableError) return error;
  const found = pgCauseOf(error);
  return found === null ? error : new LogUnwritableError(where, found.cause, found.code, { cause: error });
}
