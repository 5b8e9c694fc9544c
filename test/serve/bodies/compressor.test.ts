// The background compressor: a brotli that fails frees its slot, leaves the body as it was, and is reported; a body
// asked for soon waits for the next free slot.
import zlib from "node:zlib";
import { describe, expect, it } from "vitest";
import { MIN_COMPRESS_SIZE } from "../../../src/compress/gzip-members.ts";
import { createCompressor } from "../../../src/serve/bodies/compressor.ts";
import type { CompressionKind } from "../../../src/serve/bodies/compressor.ts";
import type { LoadedBlob } from "../../../src/snapshot/load.ts";

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

describe("createCompressor's brotliSoon", () => {
  /** A brotli that finishes only when told: `finish()` completes the oldest one still running. */
  const heldBrotli = () => {
    const running: { input: Buffer; cb: (err: Error | null, out: Buffer) => void }[] = [];
    const brotli = ((input: Buffer, _opts: unknown, cb: (err: Error | null, out: Buffer) => void) =>
      running.push({ input, cb })) as unknown as typeof zlib.brotliCompress;
    const finish = () => {
      const r = running.shift()!;
      r.cb(null, zlib.brotliCompressSync(r.input));
    };
    return { brotli, running, finish };
  };

  it("starts a body when a slot frees (a brotli ends, or a slot taken for a template is released), oldest first", () => {
    const held = heldBrotli();
    const compressor = createCompressor(1, { brotli: held.brotli });
    const [a, b, c] = [blob(), blob(), blob()];
    compressor.brotliSoon(a);
    compressor.brotliSoon(b);
    compressor.brotliLater(c); // not queued: its caller asks again
    expect(held.running.map((r) => r.input)).toEqual([a.identity]);
    held.finish();
    expect(a.br).not.toBeNull();
    expect(held.running.map((r) => r.input)).toEqual([b.identity]);
    held.finish();
    expect(b.br).not.toBeNull();
    expect([held.running.length, compressor.busy, c.br]).toEqual([0, 0, null]);

    const release = compressor.slot()!;
    const d = blob();
    compressor.brotliSoon(d);
    expect(held.running.length).toBe(0);
    release();
    release(); // twice: one slot freed, once
    expect(held.running.map((r) => r.input)).toEqual([d.identity]);
    expect(compressor.busy).toBe(1);
  });

  it("skips a waiting body that has its brotli by then, and keeps at most 64 waiting (the oldest forgotten)", () => {
    const held = heldBrotli();
    const compressor = createCompressor(1, { brotli: held.brotli });
    compressor.brotliSoon(blob()); // takes the slot
    const waiting = Array.from({ length: 66 }, blob);
    for (const w of waiting) compressor.brotliSoon(w);
    waiting[2]!.br = Buffer.from("made elsewhere");
    for (let i = 0; i < 70 && held.running.length > 0; i++) held.finish();
    // The first two were forgotten, the third had its own; the other 63 were compressed, in order.
    expect(waiting.map((w) => w.br !== null)).toEqual([false, false, ...Array<boolean>(64).fill(true)]);
    expect(compressor.busy).toBe(0);
  });
});
