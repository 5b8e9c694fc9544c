// The snapshot resources' endpoint (sale lists, sale and product details, categories, sizes): the body of a path at
// an instant, pre-rendered, from memory (sale lists composed once per segment, bodies/sale-lists.ts), and the
// responder that sends it.
import { ENDPOINTS } from "../../api/endpoints.ts";
import { endpointPath, matchEndpoint } from "../../api/routing.ts";
import { STORES } from "../../catalog/schema.ts";
import { notFound } from "../../errors.ts";
import type { LoadedBlob, LoadedSegment, LoadedSnapshot } from "../../snapshot/load.ts";
import type { Compressor } from "../bodies/compressor.ts";
import { foundSender } from "../bodies/respond.ts";
import { Missing } from "../bodies/response-body.ts";
import type { Found, Resources } from "../bodies/response-body.ts";
import { composeList } from "../bodies/sale-lists.ts";
import type { ResponderModule } from "../responder.ts";

/** Sends the resource's body at this second (admitted requests have a snapshot: a gate without one admits none). */
export const responder: ResponderModule["responder"] = (services) => {
  const send = foundSender(services);
  return (req, res, s, a, info, headers, nowMs) =>
    send(req, res, s.resources!.at(a!.path, a!.states!, Math.floor(nowMs / 1000)), a!, info, headers, nowMs);
};

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
export function createResources(snapshot: LoadedSnapshot, compressor: Compressor): Resources {
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

// The 404s of a path whose time is not now, made once (their rendering is then made once too, in bodies/respond.ts).
const SALE_ENDED = notFound("this sale has ended");
const SALE_NOT_BEGUN = notFound("this sale has not begun yet");
const NOT_ON_SALE = notFound("this product is not on sale now");

function describeMissing(path: string): string {
  const match = matchEndpoint(path);
  return match?.endpoint.missing?.(match.params) ?? "no such resource";
}
