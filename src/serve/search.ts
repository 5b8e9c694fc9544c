// Search responses: the engine's ranked IDs turned into a page assembled from the pre-rendered product bytes; for
// clients that accept gzip, a gzip stream assembled from the products' precompressed deflate data instead.
import { createHash } from "node:crypto";
import zlib from "node:zlib";
import { deflateFragment, SPLICEABLE_HEADER, SYNC_FLUSHED } from "../snapshot/gzip-members.ts";
import type { LoadedBlob, LoadedSnapshot } from "../snapshot/load.ts";
import { crc32Combine, crc32Shift } from "./crc32.ts";
import { parseSearchParams } from "./search-params.ts";

const OPEN = Buffer.from('{"products":[');
const COMMA = Buffer.from(",");
/** Search pages at least this large are gzipped for clients that accept gzip. */
export const GZIP_FROM = 1024;

export interface SearchPage {
  body: LoadedBlob;
  /** When the answer next changes (epoch seconds), or null. */
  changesAt: number | null;
  /** The page gzipped from the products' deflate data (a fraction of the cost of compressing the page); null when small. */
  gzip: (() => Buffer) | null;
}

/**
 * A search page as a body: its ETag and length are known at once, its bytes (and the page-link offsets `affid`
 * needs) are assembled only if they are sent, so a 304 or a gzip response never copies the products.
 */
class PageBlob implements LoadedBlob {
  readonly hash: string;
  readonly gzip = null;
  readonly br = null;
  etags: [string, string, string] | null = null;
  readonly #products: readonly LoadedBlob[];
  readonly #tail: Buffer;
  readonly #size: number;
  #identity: Buffer | null = null;
  #links: number[] | null = null;

  constructor(hash: string, products: readonly LoadedBlob[], tail: Buffer, size: number) {
    this.hash = hash;
    this.#products = products;
    this.#tail = tail;
    this.#size = size;
  }

  get size(): number {
    return this.#size;
  }

  get identity(): Buffer {
    if (this.#identity) return this.#identity;
    const out = Buffer.allocUnsafe(this.#size);
    out.set(OPEN, 0);
    let at = OPEN.length;
    for (let i = 0; i < this.#products.length; i++) {
      if (i > 0) out[at++] = 0x2c; // ,
      const bytes = this.#products[i]!.identity;
      out.set(bytes, at); // TypedArray#set: a plain copy, cheaper than Buffer#copy's checks at ~100 parts a page
      at += bytes.length;
    }
    out.set(this.#tail, at);
    return (this.#identity = out);
  }

  get links(): number[] {
    if (this.#links) return this.#links;
    const links: number[] = [];
    let at = OPEN.length;
    for (let i = 0; i < this.#products.length; i++) {
      if (i > 0) at++;
      const product = this.#products[i]!;
      for (const off of product.links) links.push(at + off);
      at += product.identity.length;
    }
    return (this.#links = links);
  }
}

/** The search result for the request's parameters at `now`. */
export function searchBody(snapshot: LoadedSnapshot, query: Map<string, string[]>, now: number): SearchPage {
  const result = snapshot.search.search(parseSearchParams(query, now));
  const products: LoadedBlob[] = new Array(result.ids.length);
  let size = OPEN.length;
  let hashes = "";
  for (let i = 0; i < result.ids.length; i++) {
    const id = result.ids[i]!;
    const product = snapshot.products.get(id);
    if (!product) throw new Error(`search index names product ${id}, which the snapshot does not hold`);
    products[i] = product;
    size += product.identity.length + (i > 0 ? 1 : 0);
    hashes += product.hash;
  }
  const tail = Buffer.from(`],"total_found":${result.total}}`);
  size += tail.length;
  // The ETag: the products' content hashes (each changes with its bytes) and the tail (total_found).
  const hash = createHash("sha1").update(hashes).update(tail).digest("hex").slice(0, 32);
  return { body: new PageBlob(hash, products, tail, size), changesAt: result.nextChange, gzip: size >= GZIP_FROM ? () => gzipPage(products, tail, size) : null };
}

/** A body's raw deflate data (ending byte-aligned, without a final block, so that such pieces concatenate) and CRC-32. */
interface Piece {
  deflate: Buffer;
  crc: number;
  /** crc32Shift(identity length). */
  shift: number;
}

/**
 * Each product's piece: the deflate data inside the snapshot's gzip variant (a slice, no copy) and the CRC from its
 * trailer; for a body without a gzip variant in that layout (small ones have none), compressed once and kept.
 */
const pieces = new WeakMap<LoadedBlob, Piece>();

function pieceOf(body: Buffer | LoadedBlob): Piece {
  if (Buffer.isBuffer(body)) return { deflate: zlib.deflateRawSync(body, SYNC_FLUSHED), crc: zlib.crc32(body) >>> 0, shift: crc32Shift(body.length) };
  let piece = pieces.get(body);
  if (!piece) {
    const spliceable = body.gzip ? deflateFragment(body.gzip, body.identity.length) : null;
    if (spliceable) {
      piece = { deflate: spliceable, crc: body.gzip!.readUInt32LE(body.gzip!.length - 8), shift: crc32Shift(body.identity.length) };
    } else {
      piece = pieceOf(body.identity);
      // Its own memory, not a slice of zlib's 16 KB output chunk (see own() in bodies.ts).
      piece.deflate = Buffer.from(piece.deflate);
    }
    pieces.set(body, piece);
  }
  return piece;
}

const OPEN_PIECE = pieceOf(OPEN);
const COMMA_PIECE = pieceOf(COMMA);

/** The gzip stream of a search page: the pieces joined, the tail stored as the final block, the CRC combined. */
function gzipPage(products: readonly LoadedBlob[], tail: Buffer, size: number): Buffer {
  const parts: Buffer[] = new Array(products.length);
  let length = SPLICEABLE_HEADER.length + OPEN_PIECE.deflate.length + Math.max(0, products.length - 1) * COMMA_PIECE.deflate.length + 5 + tail.length + 8;
  let crc = OPEN_PIECE.crc;
  for (let i = 0; i < products.length; i++) {
    if (i > 0) crc = crc32Combine(crc, COMMA_PIECE.crc, COMMA_PIECE.shift);
    const piece = pieceOf(products[i]!);
    parts[i] = piece.deflate;
    length += piece.deflate.length;
    crc = crc32Combine(crc, piece.crc, piece.shift);
  }
  crc = crc32Combine(crc, zlib.crc32(tail) >>> 0, crc32Shift(tail.length));
  const out = Buffer.allocUnsafe(length);
  out.set(SPLICEABLE_HEADER, 0);
  out.set(OPEN_PIECE.deflate, SPLICEABLE_HEADER.length);
  let at = SPLICEABLE_HEADER.length + OPEN_PIECE.deflate.length;
  for (let i = 0; i < parts.length; i++) {
    if (i > 0) {
      out.set(COMMA_PIECE.deflate, at);
      at += COMMA_PIECE.deflate.length;
    }
    out.set(parts[i]!, at);
    at += parts[i]!.length;
  }
  // The tail as a final stored block: BFINAL 1, BTYPE 00, byte-aligned here; LEN, NLEN, the bytes.
  out[at] = 0x01;
  out.writeUInt16LE(tail.length, at + 1);
  out.writeUInt16LE(~tail.length & 0xffff, at + 3);
  out.set(tail, at + 5);
  at += 5 + tail.length;
  out.writeUInt32LE(crc, at);
  out.writeUInt32LE(size >>> 0, at + 4);
  return out;
}
