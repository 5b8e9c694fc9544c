// Gzip streams assembled from precompressed pieces (see DESIGN.md): a sale list, a search page, each sent gzipped
// without compressing anything per request. (A body with the same bytes inserted at every page link: gzip-insert.ts.)
import zlib from "node:zlib";
import type { LoadedBlob } from "../snapshot/load.ts";
import { allocKept } from "./alloc.ts";
import type { Alloc } from "./alloc.ts";
import { crc32Combine, crc32Shift } from "./crc32.ts";
import { derivedOf } from "./derived.ts";
import { deflateFragment, SPLICEABLE_HEADER, SYNC_FLUSHED } from "./gzip-members.ts";

/** Raw deflate data that starts and ends byte-aligned without a final block, with the CRC-32 and length of what it inflates to. */
export interface Piece {
  deflate: Buffer;
  crc: number;
  length: number;
  /** crc32Shift(length): what appending this piece does to a CRC. */
  shift: number;
}

/** The most bytes one stored block holds. */
const STORED_MAX = 0xffff;

/**
 * `bytes` as stored (uncompressed) deflate blocks: 5 bytes of header per 64 KB. For the few bytes spliced in per
 * request (`&affid=...`, a JSONP name, a page's `total_found`), storing costs less than compressing.
 */
export function storedPiece(bytes: Buffer): Piece {
  const blocks = Math.max(1, Math.ceil(bytes.length / STORED_MAX));
  const deflate = Buffer.allocUnsafe(bytes.length + 5 * blocks);
  let at = 0;
  for (let from = 0; from < bytes.length || at === 0; from += STORED_MAX) {
    const n = Math.min(STORED_MAX, bytes.length - from);
    deflate[at] = 0x00; // BFINAL 0, BTYPE 00 (stored); we are byte-aligned, so the rest of the byte is padding
    deflate.writeUInt16LE(n, at + 1);
    deflate.writeUInt16LE(~n & 0xffff, at + 3);
    bytes.copy(deflate, at + 5, from, from + n);
    at += 5 + n;
  }
  return { deflate, crc: zlib.crc32(bytes) >>> 0, length: bytes.length, shift: crc32Shift(bytes.length) };
}

/** A piece of bytes compressed once (a constant, or a body without a usable gzip variant). */
function compressedPiece(bytes: Buffer): Piece {
  const raw = zlib.deflateRawSync(bytes, SYNC_FLUSHED);
  // A copy of its own: the sync call's output is a slice of a larger chunk that would otherwise stay alive.
  const deflate = Buffer.allocUnsafeSlow(raw.length);
  raw.copy(deflate);
  return { deflate, crc: zlib.crc32(bytes) >>> 0, length: bytes.length, shift: crc32Shift(bytes.length) };
}

/**
 * A body's pieces: `links.length + 1` of them, piece i ending where page link i's closing quote is, so that
 * `&affid=` goes between pieces. They are slices of the snapshot's gzip variant (no copy), with CRCs worked out
 * once; a body whose gzip variant is missing or not split so (small bodies have none) is compressed once here.
 * Worked out on first use and kept with the body (derived.ts).
 */
export function piecesOf(blob: LoadedBlob): readonly Piece[] {
  const derived = derivedOf(blob);
  return (derived.pieces ??= slicedPieces(blob) ?? compressedPieces(blob));
}

/** The pieces as slices of the blob's gzip variant, or null where it has none split at its links. */
function slicedPieces({ identity, links, gzip, gzipPieces }: LoadedBlob): Piece[] | null {
  if (!gzip || gzipPieces.length !== links.length) return null;
  const data = deflateFragment(gzip, identity.length);
  if (!data) return null;
  const pieces: Piece[] = [];
  let from = 0;
  let at = 0;
  for (let i = 0; i <= links.length; i++) {
    const to = i < links.length ? links[i]! : identity.length;
    const size = i < links.length ? gzipPieces[i]! : data.length - at;
    if (size < 0 || at + size > data.length || to < from) return null; // sizes that do not add up: a damaged entry
    const bytes = identity.subarray(from, to);
    pieces.push({
      deflate: data.subarray(at, at + size),
      crc: zlib.crc32(bytes) >>> 0,
      length: bytes.length,
      shift: crc32Shift(bytes.length),
    });
    from = to;
    at += size;
  }
  return pieces;
}

/** The pieces compressed here, once. */
function compressedPieces({ identity, links }: LoadedBlob): Piece[] {
  let from = 0;
  return [...links, identity.length].map((to) => {
    const piece = compressedPiece(identity.subarray(from, to));
    from = to;
    return piece;
  });
}

/** A body's deflate data whole (no insert at its links), alone and as a later element of a JSON array. */
export interface Element extends Piece {
  /** CRC-32, length and shift of `,` followed by the body: what appending it after a comma does. */
  afterComma: { crc: number; length: number; shift: number };
}

const COMMA = storedPiece(Buffer.from(","));

/**
 * A body's pieces as one (a view of its gzip variant's data when they lie in a row there, as the snapshot's do),
 * with the CRC-32 of the body after a comma worked out too: joining bodies as they are then costs one CRC
 * combination a body, not one a piece and another for the comma. Made once per body.
 */
export function elementOf(blob: LoadedBlob): Element {
  const derived = derivedOf(blob);
  if (derived.element) return derived.element;
  const pieces = piecesOf(blob);
  const first = pieces[0]!.deflate;
  let size = 0;
  let inRow = true;
  for (const p of pieces) {
    inRow &&= p.deflate.buffer === first.buffer && p.deflate.byteOffset === first.byteOffset + size;
    size += p.deflate.length;
  }
  const deflate = inRow
    ? Buffer.from(first.buffer, first.byteOffset, size)
    : Buffer.concat(pieces.map((p) => p.deflate));
  let crc = 0;
  let length = 0;
  for (const p of pieces) {
    crc = crc32Combine(crc, p.crc, p.shift);
    length += p.length;
  }
  const shift = crc32Shift(length);
  return (derived.element = {
    deflate,
    crc,
    length,
    shift,
    afterComma: { crc: crc32Combine(COMMA.crc, crc, shift), length: length + 1, shift: crc32Shift(length + 1) },
  });
}

/** Collects pieces in order, then writes them out as one gzip member (header, pieces, empty final block, trailer). */
export class GzipJoin {
  #parts: Buffer[] = [];
  #size = 0;
  #crc = 0;
  #length = 0;

  add(piece: Piece): void {
    this.#parts.push(piece.deflate);
    this.#size += piece.deflate.length;
    this.#crc = crc32Combine(this.#crc, piece.crc, piece.shift);
    this.#length += piece.length;
  }

  /** A body's pieces, with `between` (if any) after each piece but the last: `&affid=` at every page link. */
  addBody(blob: LoadedBlob, between: Piece | null): void {
    const pieces = piecesOf(blob);
    for (let i = 0; i < pieces.length; i++) {
      if (i > 0 && between) this.add(between);
      this.add(pieces[i]!);
    }
  }

  /** Bodies as they are (see {@link elementOf}), joined with commas: a JSON array's elements. */
  addElements(elements: readonly Element[]): void {
    for (let i = 0; i < elements.length; i++) {
      const e = elements[i]!;
      if (i === 0) {
        this.add(e);
        continue;
      }
      this.#parts.push(COMMA.deflate, e.deflate);
      this.#size += COMMA.deflate.length + e.deflate.length;
      const joint = e.afterComma;
      this.#crc = crc32Combine(this.#crc, joint.crc, joint.shift);
      this.#length += joint.length;
    }
  }

  /** The gzip member, in a buffer from `alloc`. */
  finish(alloc: Alloc = allocKept): Buffer {
    const out = alloc(SPLICEABLE_HEADER.length + this.#size + 2 + 8);
    out.set(SPLICEABLE_HEADER, 0);
    let at = SPLICEABLE_HEADER.length;
    for (const part of this.#parts) {
      out.set(part, at);
      at += part.length;
    }
    out[at] = 0x03; // an empty final block with fixed codes
    out[at + 1] = 0x00;
    out.writeUInt32LE(this.#crc, at + 2);
    out.writeUInt32LE(this.#length >>> 0, at + 6);
    return out;
  }
}
