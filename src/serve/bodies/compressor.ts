// Brotli off the event loop, for the few bodies asked for again and again (sale lists, popular variants), by a
// compressor with a fixed number of slots: what cannot start now is not queued (its caller asks again later).
import zlib from "node:zlib";
import { unshared } from "../../compress/alloc.ts";
import { MIN_COMPRESS_SIZE } from "../../compress/gzip-members.ts";
import type { LoadedBlob } from "../../snapshot/load.ts";
import { DEFAULT_COMPRESS_SLOTS } from "../../config/defaults.ts";

/** Brotli off the event loop with a fixed number of slots: what cannot start now is not queued (its caller asks again later). */
export interface Compressor {
  /** Starts brotli for `blob` unless every slot is busy or it is too small; sets `blob.br` when done, then calls `done`. */
  brotliLater(blob: LoadedBlob, done?: (br: Buffer) => void): void;
  /**
   * As brotliLater, but when every slot is busy `blob` waits for the next free one (at most SOON_MAX bodies wait; the
   * oldest is forgotten past that): for a body composed ahead of the instant it is first asked for, which no request
   * would ask brotli for until then.
   */
  brotliSoon(blob: LoadedBlob): void;
  /** Takes a slot for other background compression (a gzip template): its release function, or null if none is free. */
  slot(): (() => void) | null;
  /** Reports a background compression that failed (a failure costs no client anything: the body is sent as it was). */
  failed(kind: CompressionKind, err: unknown): void;
  /** Bodies being compressed now. */
  readonly busy: number;
}

/** What failed: a body's brotli, or a list's gzip or brotli template (templates.ts). */
export type CompressionKind = "brotli" | "gzip_template" | "brotli_template";

/** Options of {@link createCompressor}. */
export interface CompressorOptions {
  /** Called with each background compression that failed. Default: none. */
  onFailure?: (kind: CompressionKind, err: unknown) => void;
  /** Brotli, with node's signature. Default zlib.brotliCompress (tests give one that fails). */
  brotli?: typeof zlib.brotliCompress;
}

/** Bodies that wait for a slot (brotliSoon): a snapshot's sale lists for its next instants are a dozen. */
const SOON_MAX = 64;

/** A compressor with `slots` slots (default DEFAULT_COMPRESS_SLOTS); each slot holds one body and one brotli state. */
export function createCompressor(slots = DEFAULT_COMPRESS_SLOTS, options: CompressorOptions = {}): Compressor {
  const brotli = options.brotli ?? zlib.brotliCompress;
  let busy = 0;
  const started = new WeakSet<LoadedBlob>();
  /** Bodies waiting for a slot, oldest first. */
  const waiting = new Set<LoadedBlob>();
  /** A slot was freed: the oldest waiting body takes it. */
  const freed = () => {
    for (const next of waiting) {
      waiting.delete(next);
      if (next.br || started.has(next)) continue;
      compressor.brotliLater(next);
      return;
    }
  };
  const compressor: Compressor = {
    get busy() {
      return busy;
    },
    failed(kind, err) {
      options.onFailure?.(kind, err);
    },
    slot() {
      if (busy >= slots) return null;
      busy++;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        busy--;
        freed();
      };
    },
    brotliSoon(blob) {
      compressor.brotliLater(blob);
      if (blob.br || started.has(blob) || blob.identity.length < MIN_COMPRESS_SIZE) return;
      waiting.delete(blob);
      waiting.add(blob);
      if (waiting.size > SOON_MAX) waiting.delete(waiting.values().next().value!);
    },
    brotliLater(blob, done) {
      if (blob.br || busy >= slots || started.has(blob)) return;
      const { identity } = blob;
      if (identity.length < MIN_COMPRESS_SIZE) return;
      busy++;
      started.add(blob);
      const quality = identity.length > 1 << 20 ? 5 : identity.length > 32 * 1024 ? 7 : 5;
      brotli(
        identity,
        {
          params: {
            [zlib.constants.BROTLI_PARAM_QUALITY]: quality,
            [zlib.constants.BROTLI_PARAM_SIZE_HINT]: identity.length,
          },
        },
        (err, out) => {
          busy--;
          freed();
          if (err) {
            options.onFailure?.("brotli", err);
            return;
          }
          if (out.length >= identity.length * 0.9) return;
          const br = unshared(out);
          blob.br = br;
          done?.(br);
        },
      );
    },
  };
  return compressor;
}
