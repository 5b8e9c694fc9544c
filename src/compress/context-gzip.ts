// Gzip templates for bodies with many page links (sale lists): their deflate data compressed with context, for one
// length of `&affid=...`, so that a variant with any affid of that length is assembled at half the size of one made
// of pieces compressed on their own. The templates a server holds, gzip and brotli (context-brotli.ts), are kept here.
//
// The snapshot's pieces are compressed each on its own (no piece may refer to bytes before it, since what goes
// between pieces changes per request). For a 400 KB list of 100 sales that costs context: 80 KB of gzip where the
// list compressed whole is 35 KB, and on this machine the bytes sent, not the CPU, decided the req/s of such
// variants. A deflate match refers to earlier bytes by distance, and an insert of m bytes at each link moves every
// earlier byte by the same m per link crossed whatever the insert says. So each piece is compressed with the bytes
// before it as a preset dictionary, the inserts standing in as m bytes of 0xff (which no JSON text contains, so no
// match can take bytes from them): the result is valid for every insert of length m, put in as a stored block.
import zlib from "node:zlib";
import type { LoadedBlob } from "../snapshot/load.ts";
import type { Compressor } from "../serve/bodies.ts";
import type { Insertable } from "./gzip-insert.ts";
import { ByteLru } from "../serve/byte-lru.ts";
import { makeBrotliTemplate } from "./context-brotli.ts";
import type { BrotliTemplate } from "./context-brotli.ts";

/** Bodies with fewer page links than this keep their pieces (the saving is small and a template costs a build). */
export const MIN_TEMPLATE_LINKS = 8;
/** How far back a piece's dictionary reaches: 8 KB gave 98% of the saving of the full 32 KB at a fifth of the time. */
const DICTIONARY_BYTES = 8 * 1024;
const LEVEL = 6;
/** (body, insert length, encoding) triples remembered as asked for once; a template is made on the second ask. */
const SEEN_MAX = 10_000;
/** What a body whose brotli template could not be made holds in the cache (so that it is not tried again). */
const NO_TEMPLATE = Symbol("no template");
/** The bytes a NO_TEMPLATE entry is counted as (its key and entry). */
const NO_TEMPLATE_BYTES = 128;

/** The templates a server holds: at most `maxBytes` of them, made one at a time in a slot of `compressor`. */
export interface Templates {
  /** The gzip template of `body` for inserts of `m` bytes, or null (and, on a second ask, one is made if a slot is free). */
  get(body: LoadedBlob, insertable: Insertable, m: number): Insertable | null;
  /** The brotli template (context-brotli.ts) of `body` for inserts of `m` bytes, or null, made as `get` makes one. */
  brotli(body: LoadedBlob, m: number): BrotliTemplate | null;
  /** Bytes held. */
  readonly bytes: number;
  /** Resolves once no template is being made (for tests). */
  idle(): Promise<void>;
}

type Template = Insertable | BrotliTemplate | typeof NO_TEMPLATE;

export function createTemplates(compressor: Compressor, maxBytes: number): Templates {
  const cache = new ByteLru<Template>(maxBytes);
  const seen = new Set<string>();
  let making: Promise<void> | null = null;
  /** The template under `key`, or null; on the second ask, starts `make` if nothing else is being made and a slot is free. */
  const lookup = (key: string, make: () => Promise<Exclude<Template, typeof NO_TEMPLATE> | null>): Template | null => {
    const found = cache.get(key);
    if (found) return found;
    if (!seen.delete(key)) {
      if (seen.size >= SEEN_MAX) seen.clear();
      seen.add(key);
      return null;
    }
    const release = making ? null : compressor.slot();
    if (!release) {
      seen.add(key); // asked twice: the next ask may find a slot
      return null;
    }
    making = make()
      .then(
        (t) => cache.set(key, t ?? NO_TEMPLATE, t === null ? NO_TEMPLATE_BYTES : sizeOf(t)),
        () => {}, // a failed build leaves the pieces in use; nothing to report to a client
      )
      .finally(() => {
        making = null;
        release();
      });
    return null;
  };
  return {
    get(body, insertable, m) {
      if (body.links.length < MIN_TEMPLATE_LINKS) return null;
      const t = lookup(`${body.hash}\0${m}`, () => makeTemplate(body.identity, body.links, insertable, m));
      return t && t !== NO_TEMPLATE && "cuts" in t ? t : null;
    },
    brotli(body, m) {
      if (body.links.length < MIN_TEMPLATE_LINKS) return null;
      const t = lookup(`${body.hash}\0${m}\0br`, () => makeBrotliTemplate(body.identity, body.links, m));
      return t && t !== NO_TEMPLATE && "segments" in t ? t : null;
    },
    get bytes() {
      return cache.bytes;
    },
    idle: () => making ?? Promise.resolve(),
  };
}

/** The bytes a template holds. */
function sizeOf(t: Insertable | BrotliTemplate): number {
  return "cuts" in t ? t.deflate.length + t.cuts.byteLength : t.data.length + t.segments.length * 96;
}

/** The template: each piece compressed (off the event loop) with the bytes before it, inserts as 0xff, as dictionary. */
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
  for (let i = 0; i <= links.length; i++) {
    const to = i < links.length ? links[i]! : identity.length;
    const piece = identity.subarray(from, to);
    const options: zlib.ZlibOptions = { level: LEVEL, finishFlush: zlib.constants.Z_SYNC_FLUSH };
    if (held > 0) options.dictionary = window.subarray(DICTIONARY_BYTES - held);
    const data = await new Promise<Buffer>((resolve, reject) =>
      zlib.deflateRaw(piece, options, (err, out) => (err ? reject(err) : resolve(out))),
    );
    parts.push(data);
    cuts[i] = size += data.length;
    held = slide(window, held, piece);
    if (i < links.length) held = slide(window, held, gap);
    from = to;
  }
  const deflate = Buffer.allocUnsafeSlow(size);
  let at = 0;
  for (const part of parts) at += part.copy(deflate, at);
  return { deflate, cuts, c: base.c, d: base.d, length: base.length };
}

/** Appends `bytes` to the last `held` bytes kept at the end of `window`; returns how many it holds now. */
function slide(window: Buffer, held: number, bytes: Uint8Array): number {
  const keep = Math.min(held, window.length - bytes.length);
  if (keep > 0) window.copy(window, window.length - bytes.length - keep, window.length - keep);
  const take = bytes.subarray(Math.max(0, bytes.length - window.length));
  window.set(take, window.length - take.length);
  return Math.min(window.length, Math.max(0, keep) + take.length);
}
