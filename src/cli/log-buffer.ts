// Request log lines gathered in memory and written in batches: one write per 64 KB or per second, not per request.
import { writeSync } from "node:fs";
import type { RequestLog } from "../serve/handler.ts";
import { NO_ROOM, RequestLineEncoder, requestLine } from "./request-line.ts";

/** Buffer's own UTF-8 encoder (what Buffer#write calls once it has checked its arguments), on every Node.js line. */
type Utf8Writable = Buffer & { utf8Write(text: string, offset: number): number };

/** Flush when this many bytes are waiting. */
export const DEFAULT_LOG_BUFFER_BYTES = 64 * 1024;
/** Flush at least this often, ms: a crash loses at most this much of the log. */
export const DEFAULT_LOG_FLUSH_MS = 1_000;

/** Where batches go. */
export interface LogSink {
  /** Takes a batch: written, or queued in order behind what was queued before. The sink may keep `chunk`. */
  write(chunk: Uint8Array): void;
  /** Resolves once everything written so far has been handed to the system. */
  drained(): Promise<void>;
}

export interface LogBuffer {
  /** Queues one line (with its newline). */
  write(line: string): void;
  /** Queues one request's line: requestLine(entry), encoded straight into the batch. */
  request(entry: RequestLog): void;
  /** Writes what is queued now. */
  flush(): void;
  /** Flushes, stops the timer, and resolves once the sink has taken everything (for a graceful exit). */
  close(): Promise<void>;
}

/**
 * A buffer in front of `out` (the process's stdout: a file, a pipe to a journal). A line per request was a system
 * call per request: half the server's throughput (measured with `npm run bench -- serve`, as-deployed case).
 * Batches cost one call per 64 KB. Memory is bounded: a full buffer is written at once, and what `out` cannot take
 * yet stays with `out` (its own backpressure) rather than here.
 */
export function createLogBuffer(out: LogSink, options: { maxBytes?: number; flushMs?: number } = {}): LogBuffer {
  const maxBytes = options.maxBytes ?? DEFAULT_LOG_BUFFER_BYTES;
  // Lines are encoded into a buffer as they come, rather than kept as strings and joined: the join and the
  // flattening of every line cost more than the lines themselves (perf, as-deployed bench).
  let buf = Buffer.allocUnsafeSlow(maxBytes);
  let at = 0;
  const encoder = new RequestLineEncoder();
  const flush = () => {
    if (at === 0) return;
    out.write(buf.subarray(0, at));
    // `out` may keep the bytes until it has written them (a pipe): the next lines go into memory of their own.
    buf = Buffer.allocUnsafeSlow(maxBytes);
    at = 0;
  };
  const write = (line: string) => {
    // A UTF-16 unit is at most 3 bytes of UTF-8: a batch never passes maxBytes (PIPE_BUF into a shared pipe).
    if (at + line.length * 3 > maxBytes) {
      flush();
      if (line.length * 3 > maxBytes) {
        out.write(Buffer.from(line)); // a line longer than a batch goes on its own
        return;
      }
    }
    at += (buf as Utf8Writable).utf8Write(line, at); // Buffer#write without its argument checks
  };
  const timer = setInterval(flush, options.flushMs ?? DEFAULT_LOG_FLUSH_MS);
  timer.unref();
  return {
    write,
    request(entry) {
      let next = encoder.encode(entry, buf, at, maxBytes);
      if (next === NO_ROOM && at > 0) {
        flush();
        next = encoder.encode(entry, buf, 0, maxBytes);
      }
      if (next >= 0) at = next;
      else write(requestLine(entry)); // a number the encoder leaves to the string, or a line longer than a batch
    },
    flush,
    close() {
      clearInterval(timer);
      flush();
      return out.drained();
    },
  };
}

/**
 * A sink writing to file descriptor `fd` (1: stdout) with write(2), as process.stdout itself does for a file or a pipe
 * on Linux (synchronously), without the stream machinery around each batch. Should the descriptor refuse a write
 * (EAGAIN on a non-blocking pipe, EPIPE), that batch and every later one go through `stream` (process.stdout), in
 * order, and with its own handling of those cases.
 */
export function fdSink(fd: number, stream: NodeJS.WritableStream): LogSink {
  let viaStream = false;
  return {
    write(chunk) {
      if (!viaStream) {
        let done = 0;
        try {
          while (done < chunk.length) done += writeSync(fd, chunk, done, chunk.length - done);
          return;
        } catch {
          viaStream = true;
          chunk = chunk.subarray(done);
        }
      }
      stream.write(chunk);
    },
    drained() {
      // An empty write's callback runs once everything written before it has been handed to the system.
      return viaStream ? new Promise((resolve) => stream.write("", () => resolve())) : Promise.resolve();
    },
  };
}
