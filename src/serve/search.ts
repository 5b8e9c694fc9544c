// Search responses: the engine's ranked IDs turned into a page assembled from the pre-rendered product bytes; for
// clients that accept gzip, a gzip stream assembled from the products' precompressed deflate data instead.
import zlib from "node:zlib";
import { deflateFragment, SPLICEABLE_HEADER, SYNC_FLUSHED } from "../snapshot/gzip-members.ts";
import type { LoadedBlob, LoadedSnapshot } from "../snapshot/load.ts";
import { crc32Combine, crc32Shift } from "./crc32.ts";
import { joinBodies, own } from "./bodies.ts";
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
 * A search page as a body: its ETag is known at once, its bytes (with the page-link offsets `affid` needs) are
 * joined only if they are sent uncompressed, so a 304 or a gzip response never copies the products.
 */
class PageBlob implements LoadedBlob {
  readonly hash: string;
  readonly gzip = null;
  readonly br = null;
  etags: [string, string, string] | null = null;
  readonly #products: readonly LoadedBlob[];
  readonly #tail: Buffer;
  #joined: { identity: Buffer; links: number[] } | null = null;

  constructor(hash: string, products: readonly LoadedBlob[], tail: Buffer) {
    this.hash = hash;
    this.#products = products;
    this.#tail = tail;
  }

  get identity(): Buffer {
    return (this.#joined ??= joinBodies(OPEN, this.#products, this.#tail)).identity;
  }

  get links(): number[] {
    return (this.#joined ??= joinBodies(OPEN, this.#products, this.#tail)).links;
  }
}

/** The search result for the request's parameters at `now`. */
export function searchBody(snapshot: LoadedSnapshot, query: Map<string, string[]>, now: number): SearchPage {
  const result = snapshot.search.search(parseSearchParams(query, now));
  const products: LoadedBlob[] = new Array(result.ids.length);
  let size = OPEN.length;
  // The ETag: a 64-bit order-sensitive mix of the products' content hashes (each changes with its bytes) and
  // total_found. It only has to tell apart the versions of one URL's page; sha1 over the hashes cost 5% of a search.
  let h1 = 0x9e3779b9 ^ result.total;
  let h2 = 0x85ebca6b ^ result.ids.length;
  for (let i = 0; i < result.ids.length; i++) {
    const id = result.ids[i]!;
    const product = snapshot.products.get(id);
    if (!product) throw new Error(`search index names product ${id}, which the snapshot does not hold`);
    products[i] = product;
    size += product.identity.length + (i > 0 ? 1 : 0);
    const piece = pieceOf(product);
    h1 = (Math.imul(rotl(h1 ^ piece.k1, 13), 0xcc9e2d51) + i) | 0;
    h2 = Math.imul(rotl(h2 ^ piece.k2, 17), 0x1b873593) ^ h1;
  }
  const tail = Buffer.from(`],"total_found":${result.total}}`);
  size += tail.length;
  const hash = `${hex8(fmix(h1 ^ h2))}${hex8(fmix((h2 + h1) | 0))}`;
  return { body: new PageBlob(hash, products, tail), changesAt: result.nextChange, gzip: size >= GZIP_FROM ? () => gzipPage(products, tail, size) : null };
}

const rotl = (x: number, r: number) => (x << r) | (x >>> (32 - r));
/** murmur3's finalizer: every input bit reaches every output bit. */
function fmix(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}
const hex8 = (n: number) => n.toString(16).padStart(8, "0");

/** What a page needs of a product besides its bytes, worked out once per product. */
interface Piece {
  /** The first 64 bits of its content hash, for page ETags. */
  k1: number;
  k2: number;
  /** Raw deflate data (ending byte-aligned without a final block, so that pieces concatenate); made when first needed. */
  deflate: Buffer | null;
  /** CRC-32 of "," followed by the body (every product of a page but the first follows a comma), and its shift. */
  commaCrc: number;
  commaShift: number;
  /** CRC-32 of the body alone, and its shift (the first product). */
  crc: number;
  shift: number;
}

/**
 * Each product's piece. Its deflate data is the one inside the snapshot's gzip variant (a slice, no copy) with the
 * CRC from its trailer; a body without a gzip variant in that layout (small ones have none) is compressed once.
 */
const pieces = new WeakMap<LoadedBlob, Piece>();

function pieceOf(body: LoadedBlob): Piece {
  let piece = pieces.get(body);
  if (!piece) {
    piece = { k1: parseInt(body.hash.slice(0, 8), 16) | 0, k2: parseInt(body.hash.slice(8, 16), 16) | 0, deflate: null, commaCrc: 0, commaShift: 0, crc: 0, shift: 0 };
    pieces.set(body, piece);
  }
  return piece;
}

/** The piece with its deflate data and CRCs filled in. */
function deflatedPieceOf(body: LoadedBlob): Piece & { deflate: Buffer } {
  const piece = pieceOf(body);
  if (piece.deflate) return piece as Piece & { deflate: Buffer };
  const spliceable = body.gzip ? deflateFragment(body.gzip, body.identity.length) : null;
  if (spliceable) {
    piece.crc = body.gzip!.readUInt32LE(body.gzip!.length - 8);
  } else {
    piece.crc = zlib.crc32(body.identity) >>> 0;
  }
  piece.shift = crc32Shift(body.identity.length);
  piece.commaCrc = crc32Combine(COMMA_CRC, piece.crc, piece.shift);
  piece.commaShift = crc32Shift(body.identity.length + 1);
  piece.deflate = spliceable ?? own(zlib.deflateRawSync(body.identity, SYNC_FLUSHED));
  return piece as Piece & { deflate: Buffer };
}

const OPEN_DEFLATE = zlib.deflateRawSync(OPEN, SYNC_FLUSHED);
const OPEN_CRC = zlib.crc32(OPEN) >>> 0;
const COMMA_DEFLATE = zlib.deflateRawSync(COMMA, SYNC_FLUSHED);
const COMMA_CRC = zlib.crc32(COMMA) >>> 0;

/** The gzip stream of a search page: the pieces joined, the tail stored as the final block, the CRC combined. */
function gzipPage(products: readonly LoadedBlob[], tail: Buffer, size: number): Buffer {
  const parts: Buffer[] = new Array(products.length);
  let length = SPLICEABLE_HEADER.length + OPEN_DEFLATE.length + Math.max(0, products.length - 1) * COMMA_DEFLATE.length + 5 + tail.length + 8;
  let crc = OPEN_CRC;
  for (let i = 0; i < products.length; i++) {
    const piece = deflatedPieceOf(products[i]!);
    parts[i] = piece.deflate;
    length += piece.deflate.length;
    crc = i > 0 ? crc32Combine(crc, piece.commaCrc, piece.commaShift) : crc32Combine(crc, piece.crc, piece.shift);
  }
  crc = crc32Combine(crc, zlib.crc32(tail) >>> 0, crc32Shift(tail.length));
  const out = Buffer.allocUnsafe(length);
  out.set(SPLICEABLE_HEADER, 0);
  out.set(OPEN_DEFLATE, SPLICEABLE_HEADER.length);
  let at = SPLICEABLE_HEADER.length + OPEN_DEFLATE.length;
  for (let i = 0; i < parts.length; i++) {
    if (i > 0) {
      out.set(COMMA_DEFLATE, at);
      at += COMMA_DEFLATE.length;
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
