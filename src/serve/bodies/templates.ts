// The gzip and brotli templates a server holds (src/compress/context-gzip.ts, context-brotli.ts): made for a body
// and an insert length on its second ask, one at a time in a slot of the background compressor, kept in a cache
// bounded by bytes. Until one is made, variants are assembled from the body's pieces.
import { makeBrotliTemplate } from "../../compress/context-brotli.ts";
import type { BrotliTemplate } from "../../compress/context-brotli.ts";
import { makeTemplate, MIN_TEMPLATE_LINKS } from "../../compress/context-gzip.ts";
import type { Insertable } from "../../compress/gzip-insert.ts";
import type { LoadedBlob } from "../../snapshot/load.ts";
import { ByteLru } from "./byte-lru.ts";
import type { CompressionKind, Compressor } from "./compressor.ts";

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
  const lookup = (
    key: string,
    kind: CompressionKind,
    make: () => Promise<Exclude<Template, typeof NO_TEMPLATE> | null>,
  ): Template | null => {
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
        // A failed build leaves the pieces in use: nothing to report to a client, but the operator is told.
        (err: unknown) => compressor.failed(kind, err),
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
      const t = lookup(`${body.hash}\0${m}`, "gzip_template", () =>
        makeTemplate(body.identity, body.links, insertable, m),
      );
      return t && t !== NO_TEMPLATE && "cuts" in t ? t : null;
    },
    brotli(body, m) {
      if (body.links.length < MIN_TEMPLATE_LINKS) return null;
      const t = lookup(`${body.hash}\0${m}\0br`, "brotli_template", () =>
        makeBrotliTemplate(body.identity, body.links, m),
      );
      return t && t !== NO_TEMPLATE && "inserts" in t ? t : null;
    },
    get bytes() {
      return cache.bytes;
    },
    idle: () => making ?? Promise.resolve(),
  };
}

/** The bytes a template holds. */
function sizeOf(t: Insertable | BrotliTemplate): number {
  return "cuts" in t ? t.deflate.length + t.cuts.byteLength : t.data.length + t.inserts.byteLength;
}
