// affid/JSONP variants of any body, made in the encoding sent and cached only when asked for again (bounded by bytes).
import { allocKept } from "../../compress/alloc.ts";
import type { Alloc } from "../../compress/alloc.ts";
import { assembleGzip, linkCutsOf, splice } from "../../compress/assemble.ts";
import { brotliInserted } from "../../compress/context-brotli.ts";
import { gzipInserted, insertableOf } from "../../compress/gzip-insert.ts";
import { MIN_COMPRESS_SIZE } from "../../compress/gzip-members.ts";
import { storedPiece } from "../../compress/pieces.ts";
import type { LoadedBlob } from "../../snapshot/load.ts";
import { ByteLru } from "./byte-lru.ts";
import type { Compressor } from "./compressor.ts";
import { DEFAULT_VARIANT_CACHE_BYTES } from "../../config/defaults.ts";
import { createSeenOnce, fmix, fnv1a } from "./fast-hash.ts";
import { JS_TYPE, JSON_TYPE } from "./response-body.ts";
import type { Found, Representation } from "./response-body.ts";
import { allocScratch } from "./scratch.ts";
import { createTemplates } from "./templates.ts";
import type { Templates } from "./templates.ts";

/** What a variant is of its body: the parameters it carries, and how it is made and kept. */
export interface VariantOptions {
  /** Put into each page link as `&affid=...`; "" for none. */
  affid: string;
  /** The JSONP function the body is wrapped in; "" for none. */
  callback: string;
  /** Made for one request (a search page): its gzip is joined piece by piece, not from a cached Insertable. Default false. */
  perRequest?: boolean;
  /** Where a body with many links finds its gzip and brotli compressed with context. Default null: pieces only. */
  templates?: Templates | null;
  /**
   * Kept in the variant cache: its bytes get memory of their own. Default false: it is made for one response and its
   * bytes are scratch buffers (scratch.ts), given back once that response is written.
   */
  cached?: boolean;
}

/**
 * A body with `affid` in its page links and/or wrapped for JSONP. Its bytes are made only when sent, in the
 * encoding sent: identity spliced, or gzip assembled from the body's pieces (see `gzipOnDemand`).
 */
export class Variant implements LoadedBlob {
  readonly hash: string;
  gzip: Buffer | null = null;
  br: Buffer | null = null;
  readonly links: number[] = [];
  readonly gzipPieces: number[] = [];
  etags: [string, string, string] | null = null;
  readonly contentType: string;
  /** Makes (once) and returns the gzip; null for a body too small to be worth compressing. */
  readonly gzipOnDemand: (() => Buffer) | null;
  /**
   * Sets `br` from a brotli template (context-brotli.ts) when the body has one for this insert's length; null for a
   * variant that cannot have one (a JSONP call, a search page, no affid).
   */
  readonly brotliOnDemand: (() => void) | null;
  readonly #body: LoadedBlob;
  readonly #insert: Buffer | null;
  readonly #callback: string;
  #identity: Buffer | null = null;
  /** Called with the bytes each representation adds once it is made (a cache counts them). */
  onGrow: ((bytes: number) => void) | null = null;

  /** Made for one request (a search page): its gzip is joined piece by piece rather than from a cached Insertable. */
  readonly #perRequest: boolean;

  readonly #templates: Templates | null;

  /** Where its bytes are made: scratch buffers for a variant made for one response, its own memory for a cached one. */
  readonly #alloc: Alloc;

  constructor(
    body: LoadedBlob,
    { affid, callback, perRequest = false, templates = null, cached = false }: VariantOptions,
  ) {
    this.#perRequest = perRequest;
    this.#templates = templates;
    this.#alloc = cached ? allocKept : allocScratch;
    this.hash = `${body.hash}-${variantTag(affid, callback)}`;
    this.contentType = callback ? JS_TYPE : JSON_TYPE;
    this.#body = body;
    this.#insert = affid && body.links.length > 0 ? Buffer.from(`&affid=${encodeURIComponent(affid)}`, "latin1") : null;
    this.#callback = callback;
    // A search page knows its size before its bytes are joined: asking would join them.
    const size = (body as Partial<{ size: number }>).size ?? body.identity.length;
    this.gzipOnDemand = size >= MIN_COMPRESS_SIZE ? () => (this.gzip ??= this.#grown(this.#makeGzip())) : null;
    this.brotliOnDemand =
      templates && this.#insert && !callback && size >= MIN_COMPRESS_SIZE ? () => this.#makeBrotli() : null;
  }

  #makeBrotli(): void {
    if (this.br) return;
    const template = this.#templates!.brotli(this.#body, this.#insert!.length);
    if (template) this.br = this.#grown(brotliInserted(template, this.#insert!, this.#alloc));
  }

  get identity(): Buffer {
    if (this.#identity) return this.#identity;
    const spliced = this.#insert
      ? splice(this.#body.identity, this.#body.links, this.#insert, this.#alloc)
      : this.#body.identity;
    const bytes = this.#callback ? wrapped(`/**/${this.#callback}(`, spliced, this.#alloc) : spliced;
    // Without a callback or links the body's own bytes are sent: nothing new is held.
    this.#identity = bytes === this.#body.identity ? bytes : this.#grown(bytes);
    return bytes;
  }

  #makeGzip(): Buffer {
    const insertable = this.#perRequest ? null : insertableOf(this.#body, linkCutsOf);
    if (insertable) {
      const insert = this.#insert ?? EMPTY;
      return gzipInserted(
        this.#templates?.get(this.#body, insertable, insert.length) ?? insertable,
        insert,
        this.#callback ? [Buffer.from(`/**/${this.#callback}(`), JSONP_CLOSE] : null,
        this.#alloc,
      );
    }
    const wrap = this.#callback
      ? ([storedPiece(Buffer.from(`/**/${this.#callback}(`)), JSONP_CLOSE_PIECE] as const)
      : null;
    return assembleGzip(this.#body, this.#insert ? storedPiece(this.#insert) : null, wrap, this.#alloc);
  }

  #grown(bytes: Buffer): Buffer {
    this.onGrow?.(bytes.length);
    return bytes;
  }
}
const JSONP_CLOSE = Buffer.from(");");

/** 64 bits that tell one affid/callback pair from another, for the variant's ETag: two seeded FNV-1a passes, mixed. */
function variantTag(affid: string, callback: string): string {
  const s = `${affid}\0${callback}`;
  // Buffer#toString("hex") of the two words: hex8 twice (Number#toString(16), padStart) cost 2 us a request.
  TAG.writeUInt32BE(fmix(fnv1a(s)), 0);
  TAG.writeUInt32BE(fmix(fnv1a(s, 0x2f5a3b17) ^ s.length), 4);
  return TAG.toString("hex");
}
const TAG = Buffer.alloc(8);

/** `open` + `body` + `);` in a buffer from `alloc`. */
function wrapped(open: string, body: Buffer, alloc: Alloc): Buffer {
  const head = Buffer.from(open);
  const out = alloc(head.length + body.length + JSONP_CLOSE.length);
  out.set(head, 0);
  out.set(body, head.length);
  out.set(JSONP_CLOSE, head.length + body.length);
  return out;
}
const EMPTY = Buffer.alloc(0);
const JSONP_CLOSE_PIECE = storedPiece(JSONP_CLOSE);

/**
 * Slots of the table of variants asked for once (a variant is cached only when asked for a second time), 64 KB: the
 * set of 10,000 strings it replaced kept a new affid's key alive long enough to be promoted, and cost two lookups.
 */
const SEEN_SLOTS = 16_384;

/**
 * Variants by body and parameters. A variant asked for once is made and forgotten (a new affid on every request
 * is normal traffic from thousands of affiliates); one asked for again is cached, in at most `maxBytes`, and one
 * asked for a third time also gets brotli from the compressor if a slot is free. Every structure here is bounded:
 * the cache by bytes, the seen-once table by slots, the compressor by slots.
 */
export function createVariants(compressor: Compressor, maxBytes = DEFAULT_VARIANT_CACHE_BYTES) {
  // A quarter of the memory holds templates of lists (templates.ts): 8 MB is some 200 of the largest list.
  const templates = createTemplates(compressor, Math.floor(maxBytes / 4));
  const cache = new ByteLru<Variant>(maxBytes - Math.floor(maxBytes / 4));
  const seenBefore = createSeenOnce(SEEN_SLOTS);
  /** The variant of `body` for `affid` and `callback`; `cacheable: false` for a body made per request (a search page). */
  const of = (body: LoadedBlob, affid: string, callback: string, cacheable: boolean): Variant => {
    if (!cacheable) return new Variant(body, { affid, callback, perRequest: true });
    const key = `${body.hash}\0${affid}\0${callback}`;
    const cached = cache.get(key);
    if (cached) {
      if (!cached.br) compressor.brotliLater(cached, (br) => cache.grow(key, cached, br.length));
      return cached;
    }
    const askedBefore = seenBefore(key); // asked for before: kept from now on
    const variant = new Variant(body, { affid, callback, templates, cached: askedBefore });
    if (askedBefore) {
      cache.set(key, variant, 0);
      variant.onGrow = (bytes) => cache.grow(key, variant, bytes);
    }
    return variant;
  };
  return {
    cache,
    templates,
    /** What to send for `found` to a request with `affid` or `callback`: its variant (without either, the body itself is sent). */
    represent(found: Found, affid: string, callback: string): Representation {
      const variant = of(found.body, affid, callback, !found.perRequest);
      return {
        body: variant,
        contentType: variant.contentType,
        gzip: variant.gzipOnDemand,
        brotli: variant.brotliOnDemand,
      };
    },
  };
}
