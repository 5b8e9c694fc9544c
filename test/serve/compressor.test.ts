// The background compressor: a brotli that fails frees its slot, leaves the body as it was, and is reported.
import zlib from "node:zlib";
import { describe, expect, it } from "vitest";
import { MIN_COMPRESS_SIZE } from "../../src/compress/gzip-members.ts";
import { createCompressor } from "../../src/serve/compressor.ts";
import type { CompressionKind } from "../../src/serve/compressor.ts";
import type { LoadedBlob } from "../../src/snapshot/load.ts";

const blob = (): LoadedBlob => ({
  hash: "h",
  identity: Buffer.from("x".repeat(MIN_COMPRESS_SIZE * 4)),
  gzip: null,
  br: null,
  links: [],
  gzipPieces: [],
  etags: null,
});

describe("createCompressor", () => {
  it("reports a failed brotli, frees its slot and leaves the body without one", async () => {
    const failures: [CompressionKind, unknown][] = [];
    const failing = ((_buf: Buffer, _opts: unknown, cb: (err: Error | null, out: Buffer) => void) =>
      setImmediate(() => cb(new Error("out of memory"), Buffer.alloc(0)))) as unknown as typeof zlib.brotliCompress;
    const compressor = createCompressor(1, { brotli: failing, onFailure: (kind, err) => failures.push([kind, err]) });
    const b = blob();
    compressor.brotliLater(b);
    expect(compressor.busy).toBe(1);
    await new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)));
    expect(compressor.busy).toBe(0);
    expect(b.br).toBeNull();
    expect(failures.map(([k, e]) => [k, (e as Error).message])).toEqual([["brotli", "out of memory"]]);
  });

  it("sets the body's brotli when it succeeds, and reports nothing", async () => {
    const failures: unknown[] = [];
    const compressor = createCompressor(1, { onFailure: (kind) => failures.push(kind) });
    const b = blob();
    const done = new Promise<Buffer>((resolve) => compressor.brotliLater(b, resolve));
    expect(zlib.brotliDecompressSync(await done).equals(b.identity)).toBe(true);
    expect(b.br).not.toBeNull();
    expect(failures).toEqual([]);
  });
});
