// The snapshot's gzip variants are "spliceable": the deflate data of each ends byte-aligned before an empty final
// block, and is made of pieces compressed on their own, split at the body's page links. So the server joins several
// bodies' deflate data into one gzip stream (sale lists, search pages), and puts `&affid=...` or a JSONP wrapper
// between pieces, without compressing again. Any gzip decoder reads them as ordinary gzip.
//
//   header (10 bytes, OS byte 0xff marks the layout) | raw deflate pieces, each sync-flushed | 03 00 (empty final
//   block) | CRC-32 | ISIZE
import zlib from "node:zlib";

/** Bodies smaller than this are not compressed: by the build, nor by the server (a variant of a small body). */
export const MIN_COMPRESS_SIZE = 256;

/** The member header: deflate, no flags, no mtime, XFL 0, OS 255 ("unknown"), which zlib itself never writes here. */
export const SPLICEABLE_HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
/** An empty final block with fixed codes: BFINAL 1, BTYPE 01, end-of-block. */
export const FINAL_EMPTY_BLOCK = Buffer.from([0x03, 0x00]);
const TRAILER = 8;

/** Raw deflate options whose output ends byte-aligned without a final block. */
export const SYNC_FLUSHED: zlib.ZlibOptions = { level: 9, finishFlush: zlib.constants.Z_SYNC_FLUSH };

/**
 * A gzip member of `body` in the spliceable layout, its deflate data split at `cuts` (ascending byte offsets: the
 * page links, where `&affid=` goes): each piece is compressed on its own, so that other bytes can be put between
 * pieces without compressing anything again. Returns the member and the compressed size of every piece but the
 * last (what the snapshot records). (The build's compression workers write the same bytes; a test checks it.)
 */
export function gzipSplit(body: Uint8Array, cuts: readonly number[] = []): { gzip: Buffer; pieces: number[] } {
  const pieces: number[] = [];
  const gzip = gzipMember(zlib, SPLICEABLE_HEADER, FINAL_EMPTY_BLOCK, body, cuts, pieces);
  return { gzip, pieces };
}

/**
 * The member itself, with every dependency a parameter: the build's compression workers run this function's own
 * source text (src/generate/compress-pool.ts), so what they write cannot drift from what the server expects.
 */
export function gzipMember(
  z: typeof zlib,
  header: Uint8Array,
  final: Uint8Array,
  body: Uint8Array,
  cuts: ArrayLike<number>,
  pieces: number[],
): Buffer {
  const flushed = { level: 9, finishFlush: z.constants.Z_SYNC_FLUSH };
  const parts: Uint8Array[] = [header];
  let at = 0;
  for (let i = 0; i < cuts.length; i++) {
    const piece = z.deflateRawSync(body.subarray(at, cuts[i]), flushed);
    parts.push(piece);
    pieces.push(piece.length);
    at = cuts[i]!;
  }
  const trailer = Buffer.allocUnsafe(8);
  trailer.writeUInt32LE(z.crc32(body) >>> 0, 0);
  trailer.writeUInt32LE(body.length >>> 0, 4);
  parts.push(z.deflateRawSync(body.subarray(at), flushed), final, trailer);
  return Buffer.concat(parts);
}

/** A gzip member of `body` in the spliceable layout, in one piece. */
export function gzipSpliceable(body: Uint8Array): Buffer {
  return gzipSplit(body).gzip;
}

/**
 * The deflate data of a spliceable gzip member (no header, final block or trailer), or null when `gz` is not in
 * that layout (a snapshot written before it, or bytes that only look alike: the recorded length must match too).
 */
export function deflateFragment(gz: Buffer, identityLength: number): Buffer | null {
  const end = gz.length - TRAILER - FINAL_EMPTY_BLOCK.length;
  if (end < SPLICEABLE_HEADER.length) return null;
  if (gz.compare(SPLICEABLE_HEADER, 0, SPLICEABLE_HEADER.length, 0, SPLICEABLE_HEADER.length) !== 0) return null;
  if (gz[end] !== 0x03 || gz[end + 1] !== 0x00) return null;
  // A sync flush ends with an empty stored block: 00 00 ff ff.
  if (gz.readUInt32BE(end - 4) !== 0x0000ffff) return null;
  if (gz.readUInt32LE(gz.length - 4) !== identityLength >>> 0) return null;
  return gz.subarray(SPLICEABLE_HEADER.length, end);
}
