// Streaming NDJSON output with backpressure: lines are batched, written through a stream, and published by rename.
import { once } from "node:events";
import { createWriteStream } from "node:fs";
import type { WriteStream } from "node:fs";
import { rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

/** Bytes gathered before handing a chunk to the stream. */
const BATCH_BYTES = 256 * 1024;

export interface LineWriter {
  /** Queues one line (without its newline). Await the result: it waits while the stream's buffer is full. */
  write(line: string): Promise<void> | undefined;
  /** Flushes, closes, and renames the temporary file into place. Returns the bytes written. */
  close(): Promise<number>;
  /** Closes and deletes the temporary file, after a failure. */
  abort(): Promise<void>;
}

/**
 * Opens `path` for writing line by line. Data goes to a hidden temporary file beside it (`.name.tmp`, which the
 * loader's `*.ndjson` patterns do not match) and is renamed over `path` by `close()`, so a reader never sees half a file.
 */
export function createLineWriter(path: string): LineWriter {
  const temp = join(dirname(path), `.${basename(path)}.tmp`);
  const stream: WriteStream = createWriteStream(temp, { encoding: "utf8" });
  let failure: Error | null = null;
  stream.on("error", (err) => {
    failure ??= err;
  });
  let batch: string[] = [];
  let batchLength = 0;
  let bytes = 0;

  const flush = (): Promise<void> | undefined => {
    if (failure) return Promise.reject(failure);
    if (batch.length === 0) return undefined;
    const chunk = batch.join("");
    batch = [];
    batchLength = 0;
    bytes += Buffer.byteLength(chunk);
    if (stream.write(chunk)) return undefined;
    return once(stream, "drain").then(() => undefined);
  };

  return {
    write(line) {
      batch.push(line, "\n");
      batchLength += line.length + 1;
      return batchLength >= BATCH_BYTES ? flush() : undefined;
    },
    async close() {
      await flush();
      stream.end();
      if (!stream.closed) await once(stream, "close");
      if (failure) throw failure;
      await rename(temp, path);
      return bytes;
    },
    async abort() {
      stream.destroy();
      if (!stream.closed) await once(stream, "close").catch(() => undefined);
      await rm(temp, { force: true });
    },
  };
}
