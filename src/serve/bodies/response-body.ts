// What a /v1/ request is answered with: the body found for it at an instant (or the 404 of a path whose time is not
// now) among a snapshot's resources (Resources, made by endpoints/resource.ts), what is sent of it (the body or a
// variant, variants.ts), and the content types it is sent as.
import type { ApiError } from "../../errors.ts";
import type { LoadedBlob, LoadedSegment } from "../../snapshot/load.ts";

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

/** The resources of one snapshot, with the sale lists composed so far (createResources, endpoints/resource.ts). */
export interface Resources {
  /** The states of `path`; throws a 404 naming why there are none. */
  statesOf(path: string): readonly LoadedSegment[];
  /**
   * The body of `path` (whose states are `segments`) at `now` (epoch seconds) and the instant it next changes; or,
   * when it has none then, its 404 and the instant that changes (a later state's start, or null when none comes).
   */
  at(path: string, segments: readonly LoadedSegment[], now: number): Found | Missing;
  /** Composes, one a turn of the event loop, the sale lists in force at `now` (epoch seconds). */
  warm(now: number): void;
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

/**
 * A path the snapshot has, with no state at the instant asked (a sale that has ended or not begun, a product between
 * sales): its 404, known to hold until `changesAt` (epoch seconds; null: for as long as the snapshot is served), so
 * it may be cached like a 200 (capped max-age) and a cache absorbs the polling after a sale ends.
 */
export class Missing {
  readonly error: ApiError;
  readonly changesAt: number | null;
  constructor(error: ApiError, changesAt: number | null) {
    this.error = error;
    this.changesAt = changesAt;
  }
}
