// Bodies at request time: sale lists composed from sale blobs, and affid/JSONP variants, each cached in memory.
import { createHash } from "node:crypto";
import zlib from "node:zlib";
import type { LoadedBlob } from "../snapshot/load.ts";

const LIST_OPEN = Buffer.from('{"sales":[');
const LIST_CLOSE = Buffer.from("]}");
/** Bodies smaller than this are sent uncompressed. */
const MIN_COMPRESS_SIZE = 256;

function shortHash(parts: readonly string[]): string {
  const h = createHash("sha256");
  for (const p of parts) h.update(p).update("\0");
  return h.digest("hex").slice(0, 32);
}

/** Splices `insert` into `bytes` at each offset (ascending). */
export function splice(bytes: Buffer, offsets: readonly number[], insert: Buffer): Buffer {
  if (offsets.length === 0) return bytes;
  const chunks: Buffer[] = [];
  let at = 0;
  for (const off of offsets) {
    chunks.push(bytes.subarray(at, off), insert);
    at = off;
  }
  chunks.push(bytes.subarray(at));
  return Buffer.concat(chunks, bytes.length + insert.length * offsets.length);
}

/**
 * A copy in memory of its own, exactly its size. zlib's sync output is a slice of a 16 KB chunk, and a Buffer
 * under 4 KB is a slice of a shared 8 KB pool slab: a cache holding the slice keeps the whole chunk alive while
 * counting only the slice, so a "64 MB" cache of small variants held over 600 MB.
 */
export function own(bytes: Buffer): Buffer {
  if (bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.length) return bytes;
  const copy = Buffer.allocUnsafeSlow(bytes.length);
  bytes.copy(copy);
  return copy;
}

/** Bodies up to this size are compressed on the spot (a fraction of a millisecond); larger ones off the event loop. */
const COMPRESS_INLINE_MAX = 32 * 1024;

/**
 * Fills in a body's gzip and brotli variants: at once for small bodies, on libuv's thread pool for large ones
 * (a sale list with a new affid costs ~12 ms to compress), which are sent uncompressed until theirs are ready.
 */
function compressInto(blob: { identity: Buffer; gzip: Buffer | null; br: Buffer | null }): void {
  const { identity } = blob;
  if (identity.length < MIN_COMPRESS_SIZE) return;
  const brotliParams = { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: identity.length > 1 << 20 ? 5 : identity.length > COMPRESS_INLINE_MAX ? 7 : 4, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: identity.length } };
  if (identity.length <= COMPRESS_INLINE_MAX) {
    blob.gzip = own(zlib.gzipSync(identity, { level: 6 }));
    blob.br = own(zlib.brotliCompressSync(identity, brotliParams));
    return;
  }
  zlib.gzip(identity, { level: 6 }, (err, out) => {
    if (!err) blob.gzip = own(out);
  });
  zlib.brotliCompress(identity, brotliParams, (err, out) => {
    if (!err) blob.br = own(out);
  });
}

/**
 * A sale list `{"sales":[a,b,...]}` from its sale blobs. The identity body is ready at once; the compressed
 * variants are computed off the event loop and used from when they are ready (until then identity is sent).
 */
export function composeList(parts: readonly LoadedBlob[]): LoadedBlob {
  const { identity, links } = joinBodies(LIST_OPEN, parts, LIST_CLOSE);
  // The fields in the order the snapshot loader creates blobs in: one hidden class for every body the responder sees.
  const blob: LoadedBlob = { hash: shortHash(parts.map((p) => p.hash)), identity, gzip: null, br: null, links, etags: null };
  compressInto(blob);
  return blob;
}

/** `open`, the parts' bytes separated by commas, `close`; with the parts' page-link offsets moved to where they land. */
export function joinBodies(open: Buffer, parts: readonly LoadedBlob[], close: Buffer): { identity: Buffer; links: number[] } {
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

/** A body made per request, but cached: the identity bytes transformed, with its own ETag. */
export interface Variant extends LoadedBlob {
  contentType: string;
}

export const JSON_TYPE = "application/json; charset=utf-8";
export const JS_TYPE = "application/javascript; charset=utf-8";

/** The body with `affid` in its page links and/or wrapped for JSONP; `compress: false` leaves gzip and br unmade. */
export function renderVariant(blob: LoadedBlob, affid: string, callback: string, compress = true): Variant {
  let identity = affid ? splice(blob.identity, blob.links, Buffer.from(`&affid=${encodeURIComponent(affid)}`)) : blob.identity;
  if (callback) identity = Buffer.concat([Buffer.from(`/**/${callback}(`), identity, Buffer.from(");")]);
  const variant: Variant = {
    hash: `${blob.hash}-${shortHash([affid, callback]).slice(0, 12)}`,
    identity: own(identity),
    gzip: null,
    br: null,
    links: [],
    etags: null,
    contentType: callback ? JS_TYPE : JSON_TYPE,
  };
  if (compress) compressInto(variant);
  return variant;
}

/** A least-recently-used cache bounded by the bytes it holds. */
export class ByteLru<V extends { identity: Buffer; gzip: Buffer | null; br: Buffer | null }> {
  private readonly map = new Map<string, V>();
  private bytes = 0;
  private readonly maxBytes: number;
  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  get(key: string): V | undefined {
    const v = this.map.get(key);
    if (v) {
      this.map.delete(key);
      this.map.set(key, v);
    }
    return v;
  }

  set(key: string, value: V): void {
    // Large bodies are compressed after they are cached: count their variants as a third of identity each.
    const size = (v: V) => v.identity.length + (v.gzip?.length ?? v.identity.length / 3) + (v.br?.length ?? v.identity.length / 3);
    this.map.set(key, value);
    this.bytes += size(value);
    for (const [k, v] of this.map) {
      if (this.bytes <= this.maxBytes || k === key) break;
      this.map.delete(k);
      this.bytes -= size(v);
    }
  }
}
