// Bodies made at request time: sale lists composed from sale blobs (variants of any body are in variants.ts). Their
// gzip is assembled from the snapshot's precompressed pieces (compress/pieces.ts), never compressed per request; brotli
// is made off the event loop for the few bodies asked for again and again, by a compressor with a fixed number of slots.
import { createHash } from "node:crypto";
import zlib from "node:zlib";
import { MIN_COMPRESS_SIZE } from "../compress/gzip-members.ts";
import type { LoadedBlob } from "../snapshot/load.ts";
import { GzipJoin, literal, piecesOf } from "../compress/pieces.ts";
import type { Piece } from "../compress/pieces.ts";
import { fresh } from "./scratch.ts";
import type { Alloc } from "./scratch.ts";

const LIST_OPEN = Buffer.from('{"sales":[');
const LIST_CLOSE = Buffer.from("]}");
const COMMA = literal(Buffer.from(","));

export const JSON_TYPE = "application/json; charset=utf-8";
export const JS_TYPE = "application/javascript; charset=utf-8";

export function shortHash(parts: readonly string[]): string {
  const h = createHash("sha256");
  for (const p of parts) h.update(p).update("\0");
  return h.digest("hex").slice(0, 32);
}

/** Splices `insert` into `bytes` at each offset (ascending), in a buffer from `alloc`. */
export function splice(bytes: Buffer, offsets: readonly number[], insert: Buffer, alloc: Alloc = fresh): Buffer {
  if (offsets.length === 0) return bytes;
  const out = alloc(bytes.length + insert.length * offsets.length);
  let from = 0;
  let at = 0;
  for (const off of offsets) {
    out.set(bytes.subarray(from, off), at);
    at += off - from;
    out.set(insert, at);
    at += insert.length;
    from = off;
  }
  out.set(bytes.subarray(from), at);
  return out;
}

/**
 * A copy in memory of its own, exactly its size. zlib's output is a slice of a larger chunk, and a Buffer under
 * 4 KB is a slice of a shared 8 KB pool slab: a cache holding the slice keeps the whole chunk alive while counting
 * only the slice, so a "64 MB" cache of small variants held over 600 MB.
 */
export function own(bytes: Buffer): Buffer {
  if (bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.length) return bytes;
  const copy = Buffer.allocUnsafeSlow(bytes.length);
  bytes.copy(copy);
  return copy;
}

/**
 * `open`, the parts' bytes separated by commas, `close` (in a buffer from `alloc`); with the parts' page-link
 * offsets moved to where they land.
 */
export function joinBodies(
  open: Buffer,
  parts: readonly LoadedBlob[],
  close: Buffer,
  alloc: Alloc = fresh,
): { identity: Buffer; links: number[] } {
  let size = open.length + close.length + Math.max(0, parts.length - 1);
  for (const part of parts) size += part.identity.length;
  const identity = alloc(size);
  const links: number[] = [];
  identity.set(open, 0);
  let at = open.length;
  for (let i = 0; i < parts.length; i++) {
    if (i > 0) identity[at++] = 0x2c; // ,
    const part = parts[i]!;
    for (const off of part.links) links.push(at + off);
    identity.set(part.identity, at); // TypedArray#set: a plain copy, cheaper than Buffer#copy's checks at ~100 parts
    at += part.identity.length;
  }
  identity.set(close, at);
  return { identity, links };
}

/** A body made of other bodies: `open`, the parts joined with commas, `close` (a sale list, a search page). */
interface Composite {
  open: Piece;
  parts: readonly LoadedBlob[];
  close: Buffer;
}
const composites = new WeakMap<LoadedBlob, Composite>();

/** Records that `blob` is `open` + parts joined with commas + `close`, so that its gzip can be assembled from theirs. */
export function registerComposite(blob: LoadedBlob, open: Piece, parts: readonly LoadedBlob[], close: Buffer): void {
  composites.set(blob, { open, parts, close });
}

/**
 * The gzip of `body`, with `between` at each of its page links and inside `wrap` (a JSONP call) if given, assembled
 * from precompressed pieces: a few buffer copies and CRC combinations, whatever the size of the body.
 */
export function assembleGzip(
  body: LoadedBlob,
  between: Piece | null = null,
  wrap: readonly [Piece, Piece] | null = null,
  alloc: Alloc = fresh,
): Buffer {
  const gzip = new GzipJoin();
  if (wrap) gzip.add(wrap[0]);
  const composite = composites.get(body);
  if (composite) {
    gzip.add(composite.open);
    for (let i = 0; i < composite.parts.length; i++) {
      if (i > 0) gzip.add(COMMA);
      gzip.addBody(composite.parts[i]!, between);
    }
    gzip.add(literal(composite.close));
  } else gzip.addBody(body, between);
  if (wrap) gzip.add(wrap[1]);
  return gzip.finish(alloc);
}

/**
 * Where a body's page links fall in its gzip variant's deflate data: after the recorded pieces of a loaded blob;
 * for a composite (whose gzip assembleGzip made), after each part's pieces as they were joined.
 */
export function linkCutsOf(body: LoadedBlob): number[] {
  const cuts: number[] = [];
  const composite = composites.get(body);
  if (!composite) {
    let at = 0;
    for (const size of body.gzipPieces) cuts.push((at += size));
    return cuts;
  }
  let at = composite.open.deflate.length;
  composite.parts.forEach((part, i) => {
    if (i > 0) at += COMMA.deflate.length;
    piecesOf(part).forEach((piece, j) => {
      if (j > 0) cuts.push(at);
      at += piece.deflate.length;
    });
  });
  return cuts;
}

/** Background brotli: at most this many bodies are being compressed at once; more are not queued. */
export const DEFAULT_COMPRESS_SLOTS = 2;

/** Brotli off the event loop with a fixed number of slots: what cannot start now is not queued (its caller asks again later). */
export interface Compressor {
  /** Starts brotli for `blob` unless every slot is busy or it is too small; sets `blob.br` when done, then calls `done`. */
  brotliLater(blob: LoadedBlob, done?: (br: Buffer) => void): void;
  /** Takes a slot for other background compression (a gzip template): its release function, or null if none is free. */
  slot(): (() => void) | null;
  /** Bodies being compressed now. */
  readonly busy: number;
}

/** A compressor with `slots` slots (default DEFAULT_COMPRESS_SLOTS); each slot holds one body and one brotli state. */
export function createCompressor(slots = DEFAULT_COMPRESS_SLOTS): Compressor {
  let busy = 0;
  const started = new WeakSet<LoadedBlob>();
  return {
    get busy() {
      return busy;
    },
    slot() {
      if (busy >= slots) return null;
      busy++;
      let released = false;
      return () => {
        if (!released) busy--;
        released = true;
      };
    },
    brotliLater(blob, done) {
      if (blob.br || busy >= slots || started.has(blob)) return;
      const { identity } = blob;
      if (identity.length < MIN_COMPRESS_SIZE) return;
      busy++;
      started.add(blob);
      const quality = identity.length > 1 << 20 ? 5 : identity.length > 32 * 1024 ? 7 : 5;
      zlib.brotliCompress(
        identity,
        {
          params: {
            [zlib.constants.BROTLI_PARAM_QUALITY]: quality,
            [zlib.constants.BROTLI_PARAM_SIZE_HINT]: identity.length,
          },
        },
        (err, out) => {
          busy--;
          if (err || out.length >= identity.length * 0.9) return;
          const br = own(out);
          blob.br = br;
          done?.(br);
        },
      );
    },
  };
}

/**
 * A sale list `{"sales":[a,b,...]}` from its sale blobs: identity joined and gzip assembled at once, brotli from
 * the compressor when a slot is free (until then the list goes out gzipped).
 */
export function composeList(parts: readonly LoadedBlob[], compressor: Compressor): LoadedBlob {
  const { identity, links } = joinBodies(LIST_OPEN, parts, LIST_CLOSE);
  // The fields in the order the snapshot loader creates blobs in: one hidden class for every body the responder sees.
  const blob: LoadedBlob = {
    hash: shortHash(parts.map((p) => p.hash)),
    identity,
    gzip: null,
    br: null,
    links,
    gzipPieces: [],
    etags: null,
  };
  registerComposite(blob, LIST_OPEN_PIECE, parts, LIST_CLOSE);
  if (identity.length >= MIN_COMPRESS_SIZE) blob.gzip = assembleGzip(blob);
  compressor.brotliLater(blob);
  return blob;
}
const LIST_OPEN_PIECE = literal(LIST_OPEN);

/** The body for a /v1/ request at an instant. */
export interface Found {
  body: LoadedBlob;
  /** When the answer next changes (epoch seconds), or null. */
  changesAt: number | null;
  /** For a body without a gzip variant that can have one (a search page): makes it, when it is sent gzipped. */
  gzip: (() => Buffer) | null;
  /** Made for this request (a search page): its variants are not cached. */
  perRequest: boolean;
}
