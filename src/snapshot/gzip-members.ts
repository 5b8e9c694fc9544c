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
  const raw: Buffer[] = [];
  const pieces: number[] = [];
  let at = 0;
  for (const cut of cuts) {
    const piece = zlib.deflateRawSync(body.subarray(at, cut), SYNC_FLUSHED);
    raw.push(piece);
    pieces.push(piece.length);
    at = cut;
  }
  raw.push(zlib.deflateRawSync(body.subarray(at), SYNC_FLUSHED));
  const trailer = Buffer.allocUnsafe(TRAILER);
  trailer.writeUInt32LE(zlib.crc32(body) >>> 0, 0);
  trailer.writeUInt32LE(body.length >>> 0, 4);
  return { gzip: Buffer.concat([SPLICEABLE_HEADER, ...raw, FINAL_EMPTY_BLOCK, trailer]), pieces };
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
