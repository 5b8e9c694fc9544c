// Request log lines gathered in memory and written in batches: one write per 64 KB or per second, not per request.

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
  let lines: string[] = [];
  let bytes = 0;
  const flush = () => {
    if (lines.length === 0) return;
    const text = lines.join("");
    lines = [];
    bytes = 0;
    out.write(text);
  };
  const timer = setInterval(flush, options.flushMs ?? DEFAULT_LOG_FLUSH_MS);
  timer.unref();
  return {
    write(line) {
      lines.push(line);
      bytes += line.length;
      if (bytes >= maxBytes) flush();
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
