// Bodies made at request time: sale lists composed from sale blobs, and affid/JSONP variants of any body. Their gzip
// is assembled from the snapshot's precompressed pieces (gzip-splice.ts), never compressed per request; brotli is
// made off the event loop for the few bodies asked for again and again, by a compressor with a fixed number of slots.
import { createHash } from "node:crypto";
import zlib from "node:zlib";
import { MIN_COMPRESS_SIZE } from "../snapshot/gzip-members.ts";
import type { LoadedBlob } from "../snapshot/load.ts";
import { GzipJoin, gzipInserted, insertableOf, literal, piecesOf } from "./gzip-splice.ts";
import type { Piece } from "./gzip-splice.ts";

const LIST_OPEN = Buffer.from('{"sales":[');
const LIST_CLOSE = Buffer.from("]}");
const COMMA = literal(Buffer.from(","));

export const JSON_TYPE = "application/json; charset=utf-8";
export const JS_TYPE = "application/javascript; charset=utf-8";

function shortHash(parts: readonly string[]): string {
  const h = createHash("sha256");
  for (const p of parts) h.update(p).update("\0");
  return h.digest("hex").slice(0, 32);
}

/** Splices `insert` into `bytes` at each offset (ascending). */
export function splice(bytes: Buffer, offsets: readonly number[], insert: Buffer): Buffer {
  if (offsets.length === 0) return bytes;
  const out = Buffer.allocUnsafe(bytes.length + insert.length * offsets.length);
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

/** `open`, the parts' bytes separated by commas, `close`; with the parts' page-link offsets moved to where they land. */
export function joinBodies(
  open: Buffer,
  parts: readonly LoadedBlob[],
  close: Buffer,
): { identity: Buffer; links: number[] } {
  let size = open.length + close.length + Math.max(0, parts.length - 1);
  for (const part of parts) size += part.identity.length;
  const identity = Buffer.allocUnsafe(size);
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
  return gzip.finish();
}

/**
 * Where a body's page links fall in its gzip variant's deflate data: after the recorded pieces of a loaded blob;
 * for a composite (whose gzip assembleGzip made), after each part's pieces as they were joined.
 */
function linkCutsOf(body: LoadedBlob): number[] {
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

/**
 * A body with `affid` in its page links and/or wrapped for JSONP. Its bytes are made only when sent, in the
 * encoding sent: identity spliced, or gzip assembled from the body's pieces (see `gzipOnDemand`).
 */
export class Variant implements LoadedBlob {
  readonly hash: string;
  gzip: Buffer | null = null;
  br: Buffer | null = null;
  readonly links: number[] = [];
  readonly gzipPieces: number[] = [];
  etags: [string, string, string] | null = null;
  readonly contentType: string;
  /** Makes (once) and returns the gzip; null for a body too small to be worth compressing. */
  readonly gzipOnDemand: (() => Buffer) | null;
  readonly #body: LoadedBlob;
  readonly #insert: Buffer | null;
  readonly #callback: string;
  #identity: Buffer | null = null;
  /** Called with the bytes each representation adds once it is made (a cache counts them). */
  onGrow: ((bytes: number) => void) | null = null;

  /** Made for one request (a search page): its gzip is joined piece by piece rather than from a cached Insertable. */
  readonly #transient: boolean;

  constructor(body: LoadedBlob, affid: string, callback: string, transient = false) {
    this.#transient = transient;
    this.hash = `${body.hash}-${shortHash([affid, callback]).slice(0, 12)}`;
    this.contentType = callback ? JS_TYPE : JSON_TYPE;
    this.#body = body;
    this.#insert = affid && body.links.length > 0 ? Buffer.from(`&affid=${encodeURIComponent(affid)}`) : null;
    this.#callback = callback;
    // A search page knows its size before its bytes are joined: asking would join them.
    const size = (body as Partial<{ size: number }>).size ?? body.identity.length;
    this.gzipOnDemand = size >= MIN_COMPRESS_SIZE ? () => (this.gzip ??= this.#grown(this.#makeGzip())) : null;
  }

  get identity(): Buffer {
    if (this.#identity) return this.#identity;
    const spliced = this.#insert ? splice(this.#body.identity, this.#body.links, this.#insert) : this.#body.identity;
    const bytes = this.#callback
      ? Buffer.concat([Buffer.from(`/**/${this.#callback}(`), spliced, JSONP_CLOSE])
      : spliced;
    // Without a callback or links the body's own bytes are sent: nothing new is held.
    this.#identity = bytes === this.#body.identity ? bytes : this.#grown(bytes);
    return bytes;
  }

  #makeGzip(): Buffer {
    const insertable = this.#transient ? null : insertableOf(this.#body, linkCutsOf);
    if (insertable)
      return gzipInserted(
        insertable,
        this.#insert ?? EMPTY,
        this.#callback ? [Buffer.from(`/**/${this.#callback}(`), JSONP_CLOSE] : null,
      );
    const wrap = this.#callback ? ([literal(Buffer.from(`/**/${this.#callback}(`)), JSONP_CLOSE_PIECE] as const) : null;
    return assembleGzip(this.#body, this.#insert ? literal(this.#insert) : null, wrap);
  }

  #grown(bytes: Buffer): Buffer {
    this.onGrow?.(bytes.length);
    return bytes;
  }
}
const JSONP_CLOSE = Buffer.from(");");
const EMPTY = Buffer.alloc(0);
const JSONP_CLOSE_PIECE = literal(JSONP_CLOSE);

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

/** What is sent: a body, its type, and how to gzip it if it has no gzip variant yet. */
export interface Representation {
  body: LoadedBlob;
  contentType: string;
  gzip: (() => Buffer) | null;
}

/** Memory for cached affid/JSONP variants, in bytes. */
export const DEFAULT_VARIANT_CACHE_BYTES = 32 * 1024 * 1024;
/** Variant keys remembered as seen once (a variant is cached only when asked for a second time). */
const SEEN_MAX = 10_000;

/**
 * Variants by body and parameters. A variant asked for once is made and forgotten (a new affid on every request
 * is normal traffic from thousands of affiliates); one asked for again is cached, in at most `maxBytes`, and one
 * asked for a third time also gets brotli from the compressor if a slot is free. Every structure here is bounded:
 * the cache by bytes, the seen-once set by count, the compressor by slots.
 */
export function createVariants(compressor: Compressor, maxBytes = DEFAULT_VARIANT_CACHE_BYTES) {
  const cache = new ByteLru<Variant>(maxBytes);
  const seen = new Set<string>();
  /** The variant of `body` for `affid` and `callback`; `cacheable: false` for a body made per request (a search page). */
  const of = (body: LoadedBlob, affid: string, callback: string, cacheable: boolean): Variant => {
    if (!cacheable) return new Variant(body, affid, callback, true);
    const key = `${body.hash}\0${affid}\0${callback}`;
    const cached = cache.get(key);
    if (cached) {
      if (!cached.br) compressor.brotliLater(cached, (br) => cache.grow(key, cached, br.length));
      return cached;
    }
    const variant = new Variant(body, affid, callback);
    if (seen.delete(key)) {
      cache.set(key, variant, 0);
      variant.onGrow = (bytes) => cache.grow(key, variant, bytes);
    } else {
      if (seen.size >= SEEN_MAX) seen.clear();
      seen.add(key);
    }
    return variant;
  };
  return {
    cache,
    /** What to send for `found`: the body itself, or its variant when the request has `affid` or `callback`. */
    represent(found: Found, affid: string, callback: string): Representation {
      if (!affid && !callback) return { body: found.body, contentType: JSON_TYPE, gzip: found.gzip };
      const variant = of(found.body, affid, callback, !found.perRequest);
      return { body: variant, contentType: variant.contentType, gzip: variant.gzipOnDemand };
    },
  };
}

/** A least-recently-used cache bounded by the bytes its values hold (as they report them). */
export class ByteLru<V> {
  private readonly map = new Map<string, { value: V; size: number }>();
  private total = 0;
  private readonly maxBytes: number;
  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  /** Bytes held now. */
  get bytes(): number {
    return this.total;
  }

  get size(): number {
    return this.map.size;
  }

  get(key: string): V | undefined {
    const entry = this.map.get(key);
    if (!entry) return undefined;
    this.map.delete(key);
    this.map.set(key, entry);
    return entry.value;
  }

  set(key: string, value: V, size: number): void {
    const old = this.map.get(key);
    if (old) {
      this.total -= old.size;
      this.map.delete(key);
    }
    this.map.set(key, { value, size });
    this.total += size;
    this.evict();
  }

  /** `key`'s value (if it is still `value`) holds `bytes` more. */
  grow(key: string, value: V, bytes: number): void {
    const entry = this.map.get(key);
    if (entry?.value !== value) return;
    entry.size += bytes;
    this.total += bytes;
    this.evict();
  }

  private evict(): void {
    for (const [key, entry] of this.map) {
      if (this.total <= this.maxBytes) break;
      this.map.delete(key);
      this.total -= entry.size;
    }
  }
}
