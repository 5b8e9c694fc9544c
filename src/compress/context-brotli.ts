// Brotli templates for bodies with many page links (sale lists): a variant with any `&affid=` of one length is
// assembled from them by copying, as with gzip (context-gzip.ts), at about 0.7 of the gzip template's bytes.
//
// A brotli stream is a series of meta-blocks; an uncompressed one (a 3-byte header, then its bytes as they are) may
// stand anywhere between two that end on a byte boundary. So the body is compressed as one stream, flushed at each
// link, with a placeholder of the insert's length written (and flushed) in the insert's place; the placeholder's
// meta-block is later replaced by an uncompressed one holding the insert. That is valid for every insert of that
// length when the decoder's state after the insert does not depend on its bytes:
// - no later match copies from the placeholder: it is made of bytes the body does not contain (0x80-0xff ones
//   absent from it), so no match of the body's bytes can reach into it;
// - the encoder's placeholder meta-block made no backward copy (a copy would change the last-distances ring that
//   later meta-blocks may refer to): no two-byte sequence repeats in the placeholders (a de Bruijn sequence of
//   order 2), and brotli copies at least two bytes;
// - literals are decoded without context modelling (which picks a literal's code by the two bytes before it):
//   BROTLI_PARAM_DISABLE_LITERAL_CONTEXT_MODELING;
// - positions are the same: the insert has the placeholder's length, and nothing is put before the body (a JSONP
//   call would move where the static dictionary's references start, so JSONP variants keep the gzip path).
// Each template is checked once by decoding it with two inserts that differ in every byte after `&affid=`.
import zlib from "node:zlib";
import { promisify } from "node:util";
import { allocKept } from "./alloc.ts";
import type { Alloc } from "./alloc.ts";
import { splice } from "./assemble.ts";
import { brotliFlushed } from "./brotli-flushed.ts";

/**
 * What a brotli variant is assembled from, for inserts of `m` bytes: the whole stream as sent but for the inserts
 * (the uncompressed meta-blocks' headers in place, room for each insert after its header), and where the inserts go.
 * A variant is then one copy of `data` and an insert written at each offset (a copy a segment and the header's bytes
 * written a link cost 6 us a request for a list of 100 sales).
 */
export interface BrotliTemplate {
  /** The stream, with zero bytes where the inserts go. */
  data: Buffer;
  /** Where each insert goes in `data` (k of them for k links, ascending). */
  inserts: Int32Array;
  /** The insert's length. */
  m: number;
}

/** Quality 5: 27 KB for a 393 KB list (quality 9: 26.7 KB at twice the time; the whole list alone is 21.9 KB). */
const QUALITY = 5;
/** The longest insert an uncompressed meta-block header of 3 bytes holds (MNIBBLES = 4). */
const MAX_INSERT = 0x10000;
const brotliDecompress = promisify(zlib.brotliDecompress);

/**
 * The template of `identity` with inserts of `m` bytes at `links` (compressed on a worker thread, checked here), or
 * null when the body leaves too few unused bytes for the placeholders or the check fails.
 */
export async function makeBrotliTemplate(
  identity: Buffer,
  links: readonly number[],
  m: number,
): Promise<BrotliTemplate | null> {
  if (m < 1 || m > MAX_INSERT || links.length === 0) return null;
  const filler = placeholderBytes(identity, links.length * m);
  if (!filler) return null;
  // The body with a placeholder after each link, flushed before and after each placeholder (brotli-flushed.ts).
  const withPlaceholders = Buffer.allocUnsafe(identity.length + filler.length);
  const cuts: number[] = [];
  let from = 0;
  let put = 0;
  for (let i = 0; i < links.length; i++) {
    put += identity.copy(withPlaceholders, put, from, links[i]);
    cuts.push(put);
    put += filler.copy(withPlaceholders, put, i * m, (i + 1) * m);
    cuts.push(put);
    from = links[i]!;
  }
  identity.copy(withPlaceholders, put, from);
  const { stream, marks: flushes } = await brotliFlushed(withPlaceholders, cuts, {
    [zlib.constants.BROTLI_PARAM_QUALITY]: QUALITY,
    [zlib.constants.BROTLI_PARAM_DISABLE_LITERAL_CONTEXT_MODELING]: 1,
    [zlib.constants.BROTLI_PARAM_SIZE_HINT]: identity.length + filler.length,
  });
  // marks[2i] ends segment i; marks[2i+1] ends the placeholder after it.
  const marks = [...flushes, stream.length];
  const k = links.length;
  let total = 0;
  for (let i = 0; i < marks.length; i += 2) total += marks[i]! - (i === 0 ? 0 : marks[i - 1]!);
  const data = Buffer.allocUnsafeSlow(total + k * (3 + m));
  const inserts = new Int32Array(k);
  // An uncompressed meta-block's header: ISLAST 0, MNIBBLES 4 (code 0), MLEN - 1 in 16 bits, ISUNCOMPRESSED 1, then
  // zero bits to the byte boundary.
  const header = (((m - 1) << 3) | (1 << 19)) >>> 0;
  for (let i = 0, at = 0; i < marks.length; i += 2) {
    at += stream.copy(data, at, i === 0 ? 0 : marks[i - 1]!, marks[i]);
    if (i / 2 < k) {
      data[at] = header & 0xff;
      data[at + 1] = (header >>> 8) & 0xff;
      data[at + 2] = header >>> 16;
      data.fill(0, at + 3, at + 3 + m);
      inserts[i / 2] = at + 3;
      at += 3 + m;
    }
  }
  const template: BrotliTemplate = { data, inserts, m };
  for (const fill of ["a", "0"]) {
    const insert = testInsert(m, fill);
    // Output room for the whole body: one call, not one turn of the event loop per 16 KB chunk (zlib's default).
    const decoded = await brotliDecompress(brotliInserted(template, insert), {
      chunkSize: identity.length + links.length * m + 1,
    }).catch(() => null);
    if (!decoded?.equals(splice(identity, links, insert))) return null;
  }
  return template;
}

/** `&affid=` and then `fill` to `m` bytes (or as much of `&affid=` as fits). */
function testInsert(m: number, fill: string): Buffer {
  const insert = Buffer.alloc(m, fill);
  insert.write("&affid=".slice(0, m));
  return insert;
}

/**
 * `n` bytes none of which occurs in `body`, in which no two-byte sequence occurs twice: the start of the de Bruijn
 * sequence of order 2 over the bytes 0x80-0xff absent from the body. Null when there are too few such bytes.
 */
export function placeholderBytes(body: Buffer, n: number): Buffer | null {
  const present = new Uint8Array(256);
  for (let i = 0; i < body.length; i++) present[body[i]!] = 1;
  const symbols: number[] = [];
  for (let b = 0x80; b < 0x100; b++) if (!present[b]) symbols.push(b);
  const k = symbols.length;
  if (k * k < n) return null;
  // The Lyndon words of length 1 and 2 in order, joined: a, then a b for each b > a, for each a.
  const out = Buffer.allocUnsafe(n);
  let at = 0;
  for (let a = 0; a < k && at < n; a++) {
    out[at++] = symbols[a]!;
    for (let b = a + 1; b < k && at < n; b++) {
      out[at++] = symbols[a]!;
      if (at < n) out[at++] = symbols[b]!;
    }
  }
  return out;
}

/** The brotli stream of the template's body with `insert` (of the template's length) at each link, from `alloc`. */
export function brotliInserted(template: BrotliTemplate, insert: Buffer, alloc: Alloc = allocKept): Buffer {
  const { data, inserts } = template;
  const out = alloc(data.length);
  out.set(data, 0);
  for (let i = 0; i < inserts.length; i++) out.set(insert, inserts[i]);
  return out;
}
