import sonicBoom from 'sonic-boom';

/** How long a line may wait for others to share its write. */
const BATCH_MS = 50;
const BATCH_BYTES = 16 * 1024;

export interface StdoutLines {
  /** Queues text for stdout; it is written within 50 ms, with whatever else came meanwhile. */
  write(text: string): void;
  /** Hands everything queued to the writer now. */
  flush(): void;
}

/**
 * The daemon's stdout, gathered for up to 50 ms a write: a busy daemon tells several decisions a
 * run, and a write each (a hand-off to the thread pool and a syscall) cost it more than deciding
 * them. Written asynchronously (sonic-boom, pino's writer): stdout on a pipe is written synchronously, so a
 * reader that falls behind (a busy terminal, a log shipper) would otherwise stall the event loop.
 * What is queued is written out when the process exits, `process.exit` included.
 */
export function stdoutLines(): StdoutLines {
  // CommonJS: Node's default import is its module.exports, which holds the class as `default` too.
  const out = new sonicBoom.default({ fd: 1, sync: false });
  // The reader gone (`runledger daemon | head`): the daemon goes on without its stdout, whose lines are
  // in the log. Any other failure to write is not ours to hide.
  let readerGone = false;
  out.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    readerGone = true;
  });
  let pending = '';
  let timer: NodeJS.Timeout | null = null;
  const flush = (): void => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (pending && !readerGone) out.write(pending);
    pending = '';
  };
  process.on('exit', () => {
    flush();
    if (readerGone) return;
    try {
      out.flushSync();
    } catch {
      // Closed under us: the lines are in the log, which is what counts.
    }
  });
  return {
    write(text) {
      pending += text;
      if (pending.length >= BATCH_BYTES) flush();
      else timer ??= setTimeout(flush, BATCH_MS).unref();
    },
    flush,
  };
}
