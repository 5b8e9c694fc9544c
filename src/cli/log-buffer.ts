// The request log: each request's entry as one JSON line, exactly JSON.stringify(entry) + "\n" (requestLine as a
// string; RequestLineEncoder straight into the bytes of a batch, which every request pays for), gathered in memory
// and written in batches: one write per 64 KB or per second, not per request.
import { writeSync } from "node:fs";
import type { RequestLog } from "../serve/handler.ts";

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
  /** Queues one request's line: requestLine(entry), encoded straight into the batch (a function: no `this`). */
  request: (entry: RequestLog) => void;
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

/**
 * The line as a string: what JSON.stringify(entry) gives, in a third of the time (0.18 against 0.54 us here). Only
 * the strings that come from outside (path, key) are escaped. The reference for RequestLineEncoder, and what it falls
 * back to for an entry it does not encode itself.
 */
export function requestLine(e: RequestLog): string {
  const key = e.key === undefined ? "" : `,"key":${quoted(e.key)}`;
  return `{"time":"${e.time}","method":${quoted(e.method)},"path":${quoted(e.path)},"status":${e.status},"bytes":${e.bytes},"ms":${e.ms}${key}}\n`;
}

/**
 * JSON.stringify of a string, remembered: methods, paths and key names repeat from request to request (a remembered
 * target's path is even the same string), and a lookup costs less than escaping again. At most QUOTED_MAX are kept.
 */
function quoted(s: string): string {
  let q = quotedStrings.get(s);
  if (q === undefined) {
    if (quotedStrings.size >= QUOTED_MAX) quotedStrings.clear();
    quotedStrings.set(s, (q = JSON.stringify(s)));
  }
  return q;
}
const quotedStrings = new Map<string, string>();
const QUOTED_MAX = 4_096;

/** encode's answer for an entry it leaves to requestLine (a number it does not write itself): rare, never a 200's. */
export const AS_STRING = -2;
/** encode's answer when the line does not fit before `end`. */
export const NO_ROOM = -1;

/** The most bytes the numbers and fixed text between the cached parts take: status, bytes and ms, their names. */
const NUMBERS_MAX = 64;
const BYTES_NAME = bytesOf(',"bytes":');
const MS_NAME = bytesOf(',"ms":');
const NO_KEY_END = bytesOf("}\n");

/**
 * Writes request log lines into a byte buffer without making a string: the parts that repeat are kept as bytes
 * (`{"time":...,"method":...,"path":` once a millisecond, each path with `,"status":`, each key name with the line's
 * end), the numbers are written digit by digit. A third of the cost of requestLine and Buffer#write (0.10 against
 * 0.31 us a line here), and no string for the collector. At most PARTS_MAX paths and key names are kept.
 */
export class RequestLineEncoder {
  private time = "";
  private method = "";
  private prefix: Uint8Array = new Uint8Array(0);
  private readonly paths = new Map<string, Uint8Array>();
  private readonly keys = new Map<string, Uint8Array>();

  /**
   * Writes the line of `e` into `buf` from `at`: returns the offset after it, NO_ROOM when it would pass `end`
   * (nothing written), or AS_STRING for an entry whose numbers it does not write (write requestLine(e) instead).
   */
  encode(e: RequestLog, buf: Uint8Array, at: number, end: number): number {
    const { status, bytes } = e;
    const us = Math.round(e.ms * 1000);
    // Integers written as digits; a duration in whole microseconds, as the handler rounds it (0.001 ms steps).
    if (!(status >= 0 && status <= INT_MAX && status % 1 === 0)) return AS_STRING;
    if (!(bytes >= 0 && bytes <= INT_MAX && bytes % 1 === 0)) return AS_STRING;
    if (!(us >= 0 && us <= INT_MAX && us / 1000 === e.ms)) return AS_STRING;
    if (e.time !== this.time || e.method !== this.method) {
      this.time = e.time;
      this.method = e.method;
      this.prefix = bytesOf(`{"time":${JSON.stringify(e.time)},"method":${JSON.stringify(e.method)},"path":`);
    }
    const prefix = this.prefix;
    const path = part(this.paths, e.path, quotedPathStatus);
    const end_ = e.key === undefined ? NO_KEY_END : part(this.keys, e.key, keyEnd);
    if (at + prefix.length + path.length + end_.length + NUMBERS_MAX > end) return NO_ROOM;
    at = put(buf, at, prefix);
    at = put(buf, at, path);
    at = putInt(buf, at, status);
    at = put(buf, at, BYTES_NAME);
    at = putInt(buf, at, bytes);
    at = put(buf, at, MS_NAME);
    // us / 1000 as JSON writes it: the whole part, then up to three decimals without trailing zeros.
    const whole = Math.floor(us / 1000);
    const frac = us - whole * 1000;
    at = putInt(buf, at, whole);
    if (frac !== 0) {
      buf[at++] = 0x2e; // .
      buf[at++] = 0x30 + Math.floor(frac / 100);
      const rest = frac % 100;
      if (rest !== 0) {
        buf[at++] = 0x30 + Math.floor(rest / 10);
        if (rest % 10 !== 0) buf[at++] = 0x30 + (rest % 10);
      }
    }
    return put(buf, at, end_);
  }
}

/** The largest integer written as digits: 2^31 - 1 (a small integer to V8, so the digit loop stays integer math). */
const INT_MAX = 0x7fffffff;
/** Paths and key names kept as bytes, each: the map is emptied when full (a client may send endless paths). */
const PARTS_MAX = 4_096;

function part(cache: Map<string, Uint8Array>, s: string, make: (s: string) => string): Uint8Array {
  let b = cache.get(s);
  if (b === undefined) {
    if (cache.size >= PARTS_MAX) cache.clear();
    cache.set(s, (b = bytesOf(make(s))));
  }
  return b;
}

const quotedPathStatus = (path: string) => `${JSON.stringify(path)},"status":`;
const keyEnd = (key: string) => `,"key":${JSON.stringify(key)}}\n`;

function bytesOf(s: string): Uint8Array {
  return Buffer.from(s, "utf8");
}

/** Copies `src` into `buf` at `at`: short parts byte by byte (cheaper than a call into set), longer ones with set. */
function put(buf: Uint8Array, at: number, src: Uint8Array): number {
  const n = src.length;
  if (n > 32) buf.set(src, at);
  else for (let i = 0; i < n; i++) buf[at + i] = src[i]!;
  return at + n;
}

/** Writes the decimal digits of a non-negative integer up to INT_MAX. */
function putInt(buf: Uint8Array, at: number, v: number): number {
  let digits = 1;
  for (let x = v; x >= 10; x = Math.floor(x / 10)) digits++;
  let p = at + digits;
  for (let x = v; p > at; x = Math.floor(x / 10)) buf[--p] = 0x30 + (x % 10);
  return at + digits;
}
