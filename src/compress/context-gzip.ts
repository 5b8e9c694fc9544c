// Gzip templates for bodies with many page links (sale lists): their deflate data compressed with context, for one
// length of `&affid=...`, so that a variant with any affid of that length is assembled at half the size of one made
// of pieces compressed on their own. (Brotli templates: context-brotli.ts; the templates a server holds, and when it
// makes them: src/serve/bodies/templates.ts.)
//
// The snapshot's pieces are compressed each on its own (no piece may refer to bytes before it, since what goes
// between pieces changes per request). For a 400 KB list of 100 sales that costs context: 80 KB of gzip where the
// list compressed whole is 35 KB, and on this machine the bytes sent, not the CPU, decided the req/s of such
// variants. A deflate match refers to earlier bytes by distance, and an insert of m bytes at each link moves every
// earlier byte by the same m per link crossed whatever the insert says. So each piece is compressed with the bytes
// before it as a preset dictionary, the inserts standing in as m bytes of 0xff (which no JSON text contains, so no
// match can take bytes from them): the result is valid for every insert of length m, put in as a stored block.
import zlib from "node:zlib";
import type { Insertable } from "./gzip-insert.ts";

/** Bodies with fewer page links than this keep their pieces (the saving is small and a template costs a build). */
export const MIN_TEMPLATE_LINKS = 8;
/** How far back a piece's dictionary reaches: 8 KB gave 98% of the saving of the full 32 KB at a fifth of the time. */
const DICTIONARY_BYTES = 8 * 1024;
const LEVEL = 6;
/**
 * The longest the template's compression holds the event loop before letting it turn. One async call a piece (some
 * 100 a sale list) waited for a turn of a loop busy with requests each, 2-3 ms a turn: 0.3 s and more under load for
 * a template that takes 10-20 ms of CPU; slices of at most this long take a few turns.
 */
const SLICE_MS = 4;

/** Resolves on the event loop's next turn, with the time then. */
const nextTurn = () => new Promise<number>((resolve) => setImmediate(() => resolve(performance.now())));

/**
 * The template: each piece compressed with the bytes before it, inserts as 0xff, as dictionary (in slices of at most
 * SLICE_MS of the event loop). `base` is the body's own Insertable (gzip-insert.ts), whose CRC terms hold for the
 * template too.
 */
export async function makeTemplate(
  identity: Buffer,
  links: readonly number[],
  base: Insertable,
  m: number,
): Promise<Insertable> {
  const parts: Buffer[] = [];
  const cuts = new Int32Array(links.length + 1);
  const window = Buffer.allocUnsafe(DICTIONARY_BYTES);
  let held = 0;
  let size = 0;
  let from = 0;
  const gap = Buffer.alloc(m, 0xff);
  let sliceStart = performance.now();
  for (let i = 0; i <= links.length; i++) {
    const to = i < links.length ? links[i]! : identity.length;
    const piece = identity.subarray(from, to);
    const options: zlib.ZlibOptions = { level: LEVEL, finishFlush: zlib.constants.Z_SYNC_FLUSH };
    if (held > 0) options.dictionary = window.subarray(DICTIONARY_BYTES - held);
    // Synchronous, a slice at a time: one async call a piece waited for a turn of a loop busy with requests each.
    if (performance.now() - sliceStart >= SLICE_MS) sliceStart = await nextTurn();
    const data = zlib.deflateRawSync(piece, options);
    parts.push(data);
    cuts[i] = size += data.length;
    held = slide(window, held, piece);
    if (i < links.length) held = slide(window, held, gap);
    from = to;
  }
  const deflate = Buffer.allocUnsafeSlow(size);
  let at = 0;
  for (const part of parts) at += part.copy(deflate, at);
  return { deflate, cuts, c: base.c, d: base.d, length: base.length, segmentViews: null };
}

/** Appends `bytes` to the last `held` bytes kept at the end of `window`; returns how many it holds now. */
function slide(window: Buffer, held: number, bytes: Uint8Array): number {
  const keep = Math.min(held, window.length - bytes.length);
  if (keep > 0) window.copy(window, window.length - bytes.length - keep, window.length - keep);
  const take = bytes.subarray(Math.max(0, bytes.length - window.length));
  window.set(take, window.length - take.length);
  return Math.min(window.length, Math.max(0, keep) + take.length);
}
