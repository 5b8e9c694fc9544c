// The snapshot's gzip variants are "spliceable": the deflate data of each ends byte-aligned before an empty final
// block, so the server can join several bodies' deflate data into one gzip stream without compressing again
// (search pages are made of product bodies). Any gzip decoder reads them as ordinary gzip.
//
//   header (10 bytes, OS byte 0xff marks the layout) | raw deflate, sync-flushed | 03 00 (empty final block) | CRC-32 | ISIZE
import zlib from "node:zlib";

/** The member header: deflate, no flags, no mtime, XFL 0, OS 255 ("unknown"), which zlib itself never writes here. */
export const SPLICEABLE_HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
/** An empty final block with fixed codes: BFINAL 1, BTYPE 01, end-of-block. */
export const FINAL_EMPTY_BLOCK = Buffer.from([0x03, 0x00]);
const TRAILER = 8;

/** Raw deflate options whose output ends byte-aligned without a final block. */
export const SYNC_FLUSHED: zlib.ZlibOptions = { level: 9, finishFlush: zlib.constants.Z_SYNC_FLUSH };

/** A gzip member of `body` in the spliceable layout. (The build's compression workers write the same bytes.) */
export function gzipSpliceable(body: Uint8Array): Buffer {
  const raw = zlib.deflateRawSync(body, SYNC_FLUSHED);
  const trailer = Buffer.allocUnsafe(TRAILER);
  trailer.writeUInt32LE(zlib.crc32(body) >>> 0, 0);
  trailer.writeUInt32LE(body.length >>> 0, 4);
  return Buffer.concat([SPLICEABLE_HEADER, raw, FINAL_EMPTY_BLOCK, trailer]);
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
