// A body's bytes with the same bytes inserted at each of its page links, and bodies made of other bodies (a sale
// list, a search page): identity joined, gzip assembled from the snapshot's precompressed pieces (pieces.ts), never
// compressed per request (see DESIGN.md).
import type { LoadedBlob } from "../snapshot/load.ts";
import { allocKept } from "./alloc.ts";
import type { Alloc } from "./alloc.ts";
import { derivedIfAny, derivedOf } from "./derived.ts";
import { GzipJoin, piecesOf, storedPiece } from "./pieces.ts";
import type { Piece } from "./pieces.ts";

const COMMA = storedPiece(Buffer.from(","));

/** Splices `insert` into `bytes` at each offset (ascending), in a buffer from `alloc`. */
export function splice(bytes: Buffer, offsets: readonly number[], insert: Buffer, alloc: Alloc = allocKept): Buffer {
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
 * `open`, the parts' bytes separated by commas, `close` (in a buffer from `alloc`); with the parts' page-link
 * offsets moved to where they land.
 */
export function joinBodies(
  open: Buffer,
  parts: readonly LoadedBlob[],
  close: Buffer,
  alloc: Alloc = allocKept,
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
export interface Composite {
  open: Piece;
  parts: readonly LoadedBlob[];
  close: Buffer;
}

/**
 * Records (with the body, derived.ts) that `blob` is `open` + parts joined with commas + `close`, so that its gzip
 * can be assembled from theirs.
 */
export function registerComposite(blob: LoadedBlob, open: Piece, parts: readonly LoadedBlob[], close: Buffer): void {
  derivedOf(blob).composite = { open, parts, close };
}

/**
 * The gzip of `body`, with `between` at each of its page links and inside `wrap` (a JSONP call) if given, assembled
 * from precompressed pieces: a few buffer copies and CRC combinations, whatever the size of the body.
 */
export function assembleGzip(
  body: LoadedBlob,
  between: Piece | null = null,
  wrap: readonly [Piece, Piece] | null = null,
  alloc: Alloc = allocKept,
): Buffer {
  const gzip = new GzipJoin();
  if (wrap) gzip.add(wrap[0]);
  const composite = derivedIfAny(body)?.composite;
  if (composite) {
    gzip.add(composite.open);
    for (let i = 0; i < composite.parts.length; i++) {
      if (i > 0) gzip.add(COMMA);
      gzip.addBody(composite.parts[i]!, between);
    }
    gzip.add(storedPiece(composite.close));
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
  const composite = derivedIfAny(body)?.composite;
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
