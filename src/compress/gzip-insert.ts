// A body with the same bytes inserted at each of its page links (`&affid=...`), optionally wrapped in a JSONP call,
// sent gzipped from the body's own gzip variant: its segments copied, the insert stored between them, and the CRC-32
// worked out from terms computed once per body, so nothing is compressed or checksummed in full per request.
import zlib from "node:zlib";
import type { LoadedBlob } from "../snapshot/load.ts";
import { allocKept } from "./alloc.ts";
import type { Alloc } from "./alloc.ts";
import { crc32Combine, crc32Shift } from "./crc32.ts";
import { derivedOf } from "./derived.ts";
import { SPLICEABLE_HEADER } from "./gzip-members.ts";
import { storedPiece } from "./pieces.ts";

/**
 * What inserting the same bytes at each of a body's page links does to its gzip, worked out once per body: its
 * deflate data (the body's own gzip variant, in place), the offsets where the links fall in it, and the CRC terms.
 * With the body cut at its k links into segments S_0..S_k, a variant is S_0 X S_1 X ... X S_k, and since
 * crc(A B) = crc(A) x^(8|B|) + crc(B) (GF(2), zlib's crc32_combine), its CRC is
 *   sum_i c_i y^(k-i) + crc(X) sum_j d_j y^(k-j),  c_i = crc(S_i) x^(8 |S_i+1..S_k|),  d_j = x^(8 |S_j..S_k|),
 * y = x^(8|X|): two Horner passes with one multiplication table for y, instead of two CRC combinations a link.
 */
export interface Insertable {
  deflate: Buffer;
  /** End offset in `deflate` of each segment's data (k + 1 of them). */
  cuts: Int32Array;
  c: Uint32Array;
  d: Uint32Array;
  length: number;
  /** Each segment's deflate data as a view of `deflate`, made on first use (by gzipInserted); null until then. */
  segmentViews: Buffer[] | null;
}

/**
 * The body's Insertable, or null when its gzip variant is missing or not cut where `cutsOf` says. Worked out on first
 * use and kept with the body (derived.ts).
 */
export function insertableOf(body: LoadedBlob, cutsOf: (blob: LoadedBlob) => number[]): Insertable | null {
  const derived = derivedOf(body);
  if (derived.insertable !== undefined) return derived.insertable;
  let found: Insertable | null = null;
  const deflate = body.gzip ? memberData(body.gzip, body.identity.length) : null;
  const cuts = deflate ? cutsOf(body) : [];
  if (
    deflate &&
    cuts.length === body.links.length &&
    cuts.every((cut, i) => cut > (cuts[i - 1] ?? 0) && cut <= deflate.length)
  ) {
    const { identity, links } = body;
    const n = identity.length;
    const k = links.length;
    const c = new Uint32Array(k + 1);
    const d = new Uint32Array(k);
    for (let i = 0; i <= k; i++) {
      const from = i === 0 ? 0 : links[i - 1]!;
      const to = i === k ? n : links[i]!;
      c[i] = crc32Combine(zlib.crc32(identity.subarray(from, to)) >>> 0, 0, crc32Shift(n - to));
      if (i < k) d[i] = crc32Shift(n - links[i]!);
    }
    found = { deflate, cuts: Int32Array.from([...cuts, deflate.length]), c, d, length: n, segmentViews: null };
  }
  return (derived.insertable = found);
}

/**
 * The deflate data of a gzip member in our layout (the spliceable header, data, an empty final block, trailer):
 * the snapshot's variants, and the ones assembleGzip makes (whose data may end in a stored block rather than a
 * sync flush, so deflateFragment's stricter check does not apply). Null for any other member.
 */
function memberData(gz: Buffer, identityLength: number): Buffer | null {
  const end = gz.length - 8 - 2;
  if (
    end < SPLICEABLE_HEADER.length ||
    gz.compare(SPLICEABLE_HEADER, 0, SPLICEABLE_HEADER.length, 0, SPLICEABLE_HEADER.length) !== 0
  )
    return null;
  if (gz[end] !== 0x03 || gz[end + 1] !== 0x00 || gz.readUInt32LE(gz.length - 4) !== identityLength >>> 0) return null;
  return gz.subarray(SPLICEABLE_HEADER.length, end);
}

/** The deflate data of each of the body's segments, as views made once. */
function segmentsOf(body: Insertable): Buffer[] {
  let views = body.segmentViews;
  if (!views) {
    views = [];
    for (let i = 0, from = 0; i < body.cuts.length; from = body.cuts[i++]!)
      views.push(body.deflate.subarray(from, body.cuts[i]));
    body.segmentViews = views;
  }
  return views;
}

/** Multiplication by y (mod the CRC polynomial) as 4 byte tables: 4 lookups instead of a 32-step loop. */
function mulTable(y: number): Uint32Array {
  const table = new Uint32Array(1024);
  for (let j = 0; j < 4; j++) {
    for (let v = 1; v < 256; v++) {
      const bit = 31 - Math.clz32(v & -v);
      table[j * 256 + v] = table[j * 256 + (v & (v - 1))]! ^ crc32Combine((1 << (8 * j + bit)) >>> 0, 0, y);
    }
  }
  return table;
}
const mulTables = new Map<number, Uint32Array>();

/**
 * The gzip member of `body` (see Insertable) with `insert` at each link, wrapped in `wrap` (a JSONP call) if given,
 * in a buffer from `alloc`.
 */
export function gzipInserted(
  body: Insertable,
  insert: Buffer,
  wrap: readonly [Buffer, Buffer] | null,
  alloc: Alloc = allocKept,
): Buffer {
  const m = insert.length;
  const k = body.c.length - 1;
  let t = mulTables.get(m);
  if (!t) {
    if (mulTables.size >= 256) mulTables.clear();
    mulTables.set(m, (t = mulTable(crc32Shift(m))));
  }
  let a = 0;
  for (let i = 0; i <= k; i++)
    a =
      (t[a & 255]! ^ t[256 + ((a >>> 8) & 255)]! ^ t[512 + ((a >>> 16) & 255)]! ^ t[768 + (a >>> 24)]! ^ body.c[i]!) >>>
      0;
  let b = 0;
  for (let j = 0; j < k; j++)
    b =
      (t[b & 255]! ^ t[256 + ((b >>> 8) & 255)]! ^ t[512 + ((b >>> 16) & 255)]! ^ t[768 + (b >>> 24)]! ^ body.d[j]!) >>>
      0;
  let crc = k === 0 ? a : (a ^ crc32Combine(zlib.crc32(insert) >>> 0, 0, b)) >>> 0;
  let length = body.length + k * m;
  const x = storedPiece(insert).deflate;
  const head = wrap ? storedPiece(wrap[0]) : null;
  const tail = wrap ? storedPiece(wrap[1]) : null;
  if (head && tail) {
    crc = crc32Combine(crc32Combine(head.crc, crc, crc32Shift(length)), tail.crc, tail.shift);
    length += head.length + tail.length;
  }
  const size =
    SPLICEABLE_HEADER.length +
    (head ? head.deflate.length + tail!.deflate.length : 0) +
    body.deflate.length +
    k * x.length +
    2 +
    8;
  const out = alloc(size);
  out.set(SPLICEABLE_HEADER, 0);
  let at = SPLICEABLE_HEADER.length;
  if (head) {
    out.set(head.deflate, at);
    at += head.deflate.length;
  }
  const segments = segmentsOf(body);
  for (let i = 0; i <= k; i++) {
    const segment = segments[i]!;
    out.set(segment, at); // TypedArray#set of a view made once: Buffer#copy made a view per call, 200 a list
    at += segment.length;
    if (i < k) {
      out.set(x, at);
      at += x.length;
    }
  }
  if (tail) {
    out.set(tail.deflate, at);
    at += tail.deflate.length;
  }
  out[at] = 0x03;
  out[at + 1] = 0x00;
  out.writeUInt32LE(crc, at + 2);
  out.writeUInt32LE(length >>> 0, at + 6);
  return out;
}
