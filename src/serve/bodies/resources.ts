// Pre-rendered resources: the body of a path at an instant, sale lists composed once per segment.
import { ENDPOINTS } from "../../api/endpoints.ts";
import { endpointPath, matchEndpoint } from "../../api/routing.ts";
import { STORES } from "../../catalog/schema.ts";
import { notFound } from "../../errors.ts";
import type { ApiError } from "../../errors.ts";
import type { LoadedBlob, LoadedSegment, LoadedSnapshot } from "../../snapshot/load.ts";
import { composeList } from "./sale-lists.ts";
import type { Compressor } from "./compressor.ts";
import type { Found } from "./response-body.ts";

/** The index of the segment in force at `t` (epoch seconds), or -1: segments are ascending and disjoint. */
function findSegmentIndex(segments: readonly LoadedSegment[], t: number): number {
  let lo = 0;
  let hi = segments.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const s = segments[mid]!;
    if (s.from !== null && t < s.from) hi = mid - 1;
    else if (s.to !== null && t >= s.to) lo = mid + 1;
    else return mid;
  }
  return -1;
}

/** Every sale list's path: the SaleList endpoints, each store's for those under a store. */
const LIST_PATHS = ENDPOINTS.filter((e) => e.body === "SaleList").flatMap((e) =>
  e.params?.store ? STORES.map((store) => endpointPath(e.id, { store })) : [endpointPath(e.id)],
);

/** The resources of one snapshot, with the sale lists composed so far (brotli for them from `compressor`). */
export function createResources(snapshot: LoadedSnapshot, compressor: Compressor) {
  const { bodies } = snapshot;
  const composed = new WeakMap<LoadedSegment, LoadedBlob>();
  const compose = (seg: LoadedSegment): LoadedBlob => {
    if (!("sales" in seg.body)) return bodies.get(seg.body);
    let blob = composed.get(seg);
    if (!blob)
      composed.set(
        seg,
        (blob = composeList(
          seg.body.sales.map((ref) => bodies.get(ref)),
          compressor,
        )),
      );
    // A list whose brotli could not start (every slot busy) asks again; the call costs nothing once it has one.
    else if (blob.br === null) compressor.brotliLater(blob);
    return blob;
  };

  /** The states of `path`; throws a 404 naming why there are none. */
  const statesOf = (path: string): readonly LoadedSegment[] => {
    const segments = snapshot.resources.get(path);
    if (!segments) throw notFound(describeMissing(path));
    return segments;
  };

  /**
   * The body of `path` (whose states are `segments`) at `now` and the instant it next changes; or, when it has none
   * then, its 404 and the instant that changes (a later state's start, or null when none comes).
   */
  const at = (path: string, segments: readonly LoadedSegment[], now: number): Found | Missing => {
    const i = findSegmentIndex(segments, now);
    if (i < 0) {
      const next = segments.find((s) => s.from !== null && s.from > now)?.from ?? null;
      const sale = path.startsWith("/v1/sales/");
      return new Missing(sale ? (next === null ? SALE_ENDED : SALE_NOT_BEGUN) : NOT_ON_SALE, next);
    }
    const segment = segments[i]!;
    if (!("sales" in segment.body))
      return { body: bodies.get(segment.body), changesAt: segment.to, gzip: null, perRequest: false };
    const body = compose(segment);
    // Compose the next state ahead of time, so the first request after a boundary costs no more than any other; its
    // brotli too, once a slot is free (no request asks for it before the boundary).
    const next = segments[i + 1];
    if (next && "sales" in next.body && !composed.has(next)) setImmediate(() => compressor.brotliSoon(compose(next)));
    return { body, changesAt: segment.to, gzip: null, perRequest: false };
  };

  /**
   * Composes, one a turn of the event loop, the sale lists in force at `now`, so that no request pays for one (at
   * 100,000 sample products the all-store active list took 40 ms and 24 MB on its first request).
   */
  const warm = (now: number): void => {
    const due: LoadedSegment[] = [];
    for (const path of LIST_PATHS) {
      const segments = snapshot.resources.get(path) ?? [];
      const i = findSegmentIndex(segments, now);
      const segment = i < 0 ? undefined : segments[i];
      if (segment && "sales" in segment.body) due.push(segment);
    }
    const next = (): void => {
      const segment = due.pop();
      if (!segment) return;
      if (!composed.has(segment)) compressor.brotliSoon(compose(segment));
      setImmediate(next);
    };
    setImmediate(next);
  };
  return { statesOf, at, warm };
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

// The 404s of a path whose time is not now, made once (their rendering is then made once too, in respond.ts).
const SALE_ENDED = notFound("this sale has ended");
const SALE_NOT_BEGUN = notFound("this sale has not begun yet");
const NOT_ON_SALE = notFound("this product is not on sale now");

function describeMissing(path: string): string {
  const match = matchEndpoint(path);
  return match?.endpoint.missing?.(match.params) ?? "no such resource";
}
