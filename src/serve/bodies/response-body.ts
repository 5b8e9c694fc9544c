// What a /v1/ request is answered with: the body found for it at an instant, what is sent of it (the body or a
// variant, variants.ts), and the content types it is sent as.
import type { LoadedBlob } from "../../snapshot/load.ts";

export const JSON_TYPE = "application/json; charset=utf-8";
/** A JSONP response (`callback=`). */
export const JS_TYPE = "application/javascript; charset=utf-8";

/** The body for a /v1/ request at an instant. */
export interface Found {
  body: LoadedBlob;
  /** When the answer next changes (epoch seconds), or null. */
  changesAt: number | null;
  /** For a body without a gzip variant that can have one (a search page): makes it, when it is sent gzipped. */
  gzip: (() => Buffer) | null;
  /** Made for this request (a search page): its variants are not cached. */
  perRequest: boolean;
}

/** What is sent: a body, its type, and how to gzip it if it has no gzip variant yet. */
export interface Representation {
  body: LoadedBlob;
  contentType: string;
  gzip: (() => Buffer) | null;
  /** Sets `body.br` if it can be made now, asked for when the client accepts brotli (see Variant.brotliOnDemand). */
  brotli: (() => void) | null;
  /**
   * false: its bytes are the snapshot's, never scratch buffers (scratch.ts), so the response does not ask. Default:
   * asked of each body sent.
   */
  scratch?: boolean;
}
