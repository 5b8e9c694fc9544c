// Request log lines gathered in memory and written in batches: one write per 64 KB or per second, not per request.

/** Buffer's own UTF-8 encoder (what Buffer#write calls once it has checked its arguments), on every Node.js line. */
type Utf8Writable = Buffer & { utf8Write(text: string, offset: number): number };

/** Flush when this many bytes are waiting. */
export const DEFAULT_LOG_BUFFER_BYTES = 64 * 1024;
/** Flush at least this often, ms: a crash loses at most this much of the log. */
export const DEFAULT_LOG_FLUSH_MS = 1_000;

export interface LogBuffer {
  /** Queues one line (with its newline). */
  write(line: string): void;
  /** Writes what is queued now. */
  flush(): void;
  /** Flushes, stops the timer, and resolves once `out` has taken everything (for a graceful exit). */
  close(): Promise<void>;
}

/**
 * A buffer in front of `out` (the process's stdout: a file, a pipe to a journal). Written to a file or a pipe,
 * stdout writes synchronously on Linux, so a line per request was a system call per request: half the server's
 * throughput (measured with `npm run bench -- serve`, as-deployed case). Batches cost one call per 64 KB. Memory
 * is bounded: a full buffer is written at once, and what `out` cannot take yet stays with `out` (its own
 * backpressure) rather than here.
 */
export function createLogBuffer(
  out: NodeJS.WritableStream,
  options: { maxBytes?: number; flushMs?: number } = {},
): LogBuffer {
  const maxBytes = options.maxBytes ?? DEFAULT_LOG_BUFFER_BYTES;
  // Lines are encoded into a buffer as they come (one call each), rather than kept as strings and joined: the join
  // and the flattening of every line cost more than the lines themselves (perf, as-deployed bench).
  let buf = Buffer.allocUnsafeSlow(maxBytes);
  let at = 0;
  const flush = () => {
    if (at === 0) return;
    out.write(buf.subarray(0, at));
    // `out` may hold the bytes until it has written them (a pipe): the next lines go into memory of their own.
    buf = Buffer.allocUnsafeSlow(maxBytes);
    at = 0;
  };
  const timer = setInterval(flush, options.flushMs ?? DEFAULT_LOG_FLUSH_MS);
  timer.unref();
  return {
    write(line) {
      // A UTF-16 unit is at most 3 bytes of UTF-8: a batch never passes maxBytes (PIPE_BUF into a shared pipe).
      if (at + line.length * 3 > maxBytes) {
        flush();
        if (line.length * 3 > maxBytes) {
          out.write(line); // a line longer than a batch goes on its own
          return;
        }
      }
      at += (buf as Utf8Writable).utf8Write(line, at); // Buffer#write without its argument checks
    },
    flush,
    close() {
      clearInterval(timer);
      flush();
      // An empty write's callback runs once everything written before it has been handed to the system.
      return new Promise((resolve) => out.write("", () => resolve()));
    },
  };
}
