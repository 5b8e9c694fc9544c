// createHandler(options) -> (req, res): serves a snapshot from memory after the API-key check, picking each body by the clock.
import type { IncomingMessage, ServerResponse } from "node:http";
import { ApiError, notFound, renderProblem, toApiError } from "../errors.ts";
import { STORES } from "../catalog/schema.ts";
import type { LoadedBlob, LoadedSegment, LoadedSnapshot } from "../snapshot/load.ts";
import { loadSnapshot } from "../snapshot/load.ts";
import type { KeyRing } from "./keys.ts";
import { loadKeyRing } from "./keys.ts";
import { ByteLru, composeList, JSON_TYPE, renderVariant } from "./bodies.ts";
import type { Variant } from "./bodies.ts";
import { negotiateEncoding } from "./encoding.ts";
import { DEFAULT_MAX_URL_LENGTH, parseCommon, parseTarget } from "./request.ts";
import { searchBody } from "./search.ts";
import { DEFAULT_AUTH_FAILURE_LIMIT, DEFAULT_KEY_LIMIT, rateLimitHeaders, TokenBuckets } from "./rate-limit.ts";
import type { Limit } from "./rate-limit.ts";

/** Freshness of a response that does not change sooner, in seconds (product data may be this stale). */
export const DEFAULT_MAX_AGE = 300;
/** Memory for cached affid/JSONP variants and search pages. */
export const DEFAULT_VARIANT_CACHE_BYTES = 64 * 1024 * 1024;

export interface RequestLog {
  time: string;
  method: string;
  /** The path only: the query string (and so the key) is never logged. */
  path: string;
  status: number;
  bytes: number;
  ms: number;
  /** The key's name, when the request had a valid key. */
  key?: string;
}

export interface HandlerOptions {
  /** Data directory with the published snapshot (`current`). */
  dataDir: string;
  /** The API keys file (hashes only). */
  keysFile: string;
  /** The clock, epoch ms. Default Date.now. Tests inject one. */
  clock?: () => number;
  /** `Cache-Control: max-age` for responses that do not change sooner. Default DEFAULT_MAX_AGE (300). */
  maxAge?: number;
  /** Longest request target, bytes. Default DEFAULT_MAX_URL_LENGTH (4096). */
  maxUrlLength?: number;
  /** Called once per request with its log entry. Default: no logging. */
  log?: (entry: RequestLog) => void;
  /** Request rate per key, unless the key's record sets its own. Default DEFAULT_KEY_LIMIT (50/s, burst 200). */
  keyLimit?: Limit;
  /** Failed authentications per client address; past it every attempt is a 401 without the key being checked. Default DEFAULT_AUTH_FAILURE_LIMIT (1/s, burst 10). */
  authFailureLimit?: Limit;
  /** Take the client address from the last X-Forwarded-For entry (behind a proxy or CDN you trust). Default false. */
  trustProxy?: boolean;
}

export interface Handler {
  (req: IncomingMessage, res: ServerResponse): void;
  /** The snapshot being served. */
  snapshot(): LoadedSnapshot;
  /** Loads the published snapshot and the keys file again and swaps to them at once. */
  reload(): Promise<{ snapshotChanged: boolean }>;
}

interface State {
  snapshot: LoadedSnapshot;
  keys: KeyRing;
  /** Sale lists composed for a segment, kept while the segment may still be asked for. */
  composed: WeakMap<LoadedSegment, LoadedBlob>;
}

const ALLOW = "GET, HEAD";

/** Finds the segment in force at `t` (epoch seconds): segments are ascending and disjoint. */
export function findSegment(segments: readonly LoadedSegment[], t: number): LoadedSegment | null {
  let lo = 0;
  let hi = segments.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const s = segments[mid]!;
    if (s.from !== null && t < s.from) hi = mid - 1;
    else if (s.to !== null && t >= s.to) lo = mid + 1;
    else return s;
  }
  return null;
}

/** Loads the snapshot and keys (failing loudly if either is missing or corrupt) and returns the request handler. */
export async function createHandler(options: HandlerOptions): Promise<Handler> {
  const clock = options.clock ?? Date.now;
  const maxAge = options.maxAge ?? DEFAULT_MAX_AGE;
  const maxUrlLength = options.maxUrlLength ?? DEFAULT_MAX_URL_LENGTH;
  const variants = new ByteLru<Variant>(DEFAULT_VARIANT_CACHE_BYTES);
  const keyLimit = options.keyLimit ?? DEFAULT_KEY_LIMIT;
  const authFailureLimit = options.authFailureLimit ?? DEFAULT_AUTH_FAILURE_LIMIT;
  const keyBuckets = new TokenBuckets();
  const failureBuckets = new TokenBuckets();
  const clientAddress = (req: IncomingMessage): string => {
    if (options.trustProxy) {
      const xff = req.headers["x-forwarded-for"];
      const last = (Array.isArray(xff) ? xff.join(",") : xff)?.split(",").pop()?.trim();
      if (last) return last;
    }
    return req.socket.remoteAddress ?? "";
  };

  /** Authenticates and rate-limits: returns the key's name, or throws 401/429. `headers` gets the RateLimit-* headers. */
  const admit = (s: State, req: IncomingMessage, query: Map<string, string[]>, nowMs: number, headers: string[]): string => {
    const address = clientAddress(req);
    const failures = failureBuckets.peek(address, authFailureLimit, nowMs);
    if (!failures.ok && query.has("apikey")) {
      throw new ApiError(401, "api_key_invalid", "too many failed API-key attempts from this address; the key was not checked", { "Retry-After": String(failures.retryAfter) });
    }
    let name: string;
    try {
      name = s.keys.authenticate(query);
    } catch (err) {
      if (err instanceof ApiError && err.code === "api_key_invalid") failureBuckets.take(address, authFailureLimit, nowMs);
      throw err;
    }
    const record = s.keys.record(name);
    const limit = record?.rate ? { rate: record.rate, burst: record.burst ?? Math.max(1, Math.ceil(record.rate * 4)) } : keyLimit;
    const take = keyBuckets.take(name, limit, nowMs);
    headers.push(...rateLimitHeaders(limit, take));
    if (!take.ok) throw new ApiError(429, "rate_limited", `this key may make ${limit.rate} requests a second (bursts of ${limit.burst}); retry after ${take.retryAfter} s`, { "Retry-After": String(take.retryAfter) });
    return name;
  };
  let state: State = { snapshot: await loadSnapshot(options.dataDir), keys: await loadKeyRing(options.keysFile), composed: new WeakMap() };

  /** The list body of a segment, composed once; the next segment is composed ahead so a boundary costs nothing. */
  const listBody = (s: State, segments: readonly LoadedSegment[], segment: LoadedSegment): LoadedBlob => {
    if (!("sales" in segment.body)) return segment.body;
    const compose = (seg: LoadedSegment) => {
      let blob = s.composed.get(seg);
      if (!blob && "sales" in seg.body) s.composed.set(seg, (blob = composeList(seg.body.sales)));
      return blob;
    };
    const next = segments[segments.indexOf(segment) + 1];
    if (next && !s.composed.has(next)) setImmediate(() => compose(next));
    return compose(segment)!;
  };

  const handler = ((req: IncomingMessage, res: ServerResponse) => {
    const started = performance.now();
    const s = state; // one snapshot for the whole request, even if a reload swaps state meanwhile
    let keyName: string | undefined;
    let path = "";
    let status = 500;
    let bytes = 0;
    const extra: string[] = [];
    try {
      const method = req.method ?? "GET";
      if (method !== "GET" && method !== "HEAD") throw new ApiError(405, "method_not_allowed", `${method} is not allowed; use GET or HEAD`, { Allow: ALLOW });
      const target = parseTarget(req.url ?? "/", maxUrlLength);
      path = target.path;
      if (!path.startsWith("/v1/")) throw notFound(`no such resource: the API's paths start with /v1/`);
      const nowMs = clock();
      keyName = admit(s, req, target.query, nowMs, extra);
      const { affid, callback } = parseCommon(target.query);
      const now = Math.floor(nowMs / 1000);

      let body: LoadedBlob;
      let changesAt: number | null;
      if (path === "/v1/products") {
        const page = searchBody(s.snapshot, target.query, now);
        body = page.body;
        changesAt = page.changesAt;
      } else {
        const segments = s.snapshot.resources.get(path);
        if (!segments) throw notFound(describeMissing(path));
        const segment = findSegment(segments, now);
        if (!segment) throw notFound(path.startsWith("/v1/sales/") ? "this sale has ended or does not exist" : "this product is not on sale now");
        body = listBody(s, segments, segment);
        changesAt = segment.to;
      }

      let rep: Variant | LoadedBlob = body;
      let contentType = JSON_TYPE;
      if (affid || callback) {
        const key = `${body.hash}\0${affid}\0${callback}`;
        let v = variants.get(key);
        if (!v) variants.set(key, (v = renderVariant(body, affid, callback)));
        rep = v;
        contentType = v.contentType;
      }
      const ttl = changesAt === null ? maxAge : Math.max(0, Math.min(maxAge, Math.floor((changesAt * 1000 - nowMs) / 1000)));
      [status, bytes] = sendRepresentation(req, res, rep, contentType, ttl, extra);
    } catch (err) {
      const error = toApiError(err);
      const problem = renderProblem(error);
      status = problem.status;
      bytes = req.method === "HEAD" ? 0 : problem.body.length;
      res.writeHead(problem.status, [...Object.entries(problem.headers).flat(), ...extra]);
      res.end(req.method === "HEAD" ? undefined : problem.body);
    }
    options.log?.({ time: new Date().toISOString(), method: req.method ?? "", path, status, bytes, ms: Math.round((performance.now() - started) * 1000) / 1000, ...(keyName ? { key: keyName } : {}) });
  }) as Handler;

  handler.snapshot = () => state.snapshot;
  handler.reload = async () => {
    const keys = await loadKeyRing(options.keysFile);
    const snapshot = await loadSnapshot(options.dataDir, { previous: state.snapshot });
    const snapshotChanged = snapshot.id !== state.snapshot.id;
    state = { snapshot: snapshotChanged ? snapshot : state.snapshot, keys, composed: snapshotChanged ? new WeakMap() : state.composed };
    return { snapshotChanged };
  };
  return handler;
}

function describeMissing(path: string): string {
  const m = /^\/v1\/sales\/([^/]+)\/(active\.json|upcoming\.json|[^/]+\/detail\.json)$/.exec(path);
  if (m && !(STORES as readonly string[]).includes(m[1]!)) return `unknown store "${m[1]}": use one of ${STORES.join(", ")}`;
  if (/^\/v1\/sales\/[^/]+\/[^/]+\/detail\.json$/.test(path)) return "no such sale in this store";
  if (/^\/v1\/products\/[^/]+\/detail\.json$/.test(path)) return "no such product";
  return "no such resource";
}

/** Writes a 200 (or a 304 when If-None-Match matches) with the best encoding the client accepts; returns [status, bytes]. */
function sendRepresentation(req: IncomingMessage, res: ServerResponse, rep: LoadedBlob, contentType: string, ttl: number, extra: string[]): [number, number] {
  const encoding = negotiateEncoding(req.headers["accept-encoding"], rep.br !== null, rep.gzip !== null);
  const body = encoding === "br" ? rep.br! : encoding === "gzip" ? rep.gzip! : rep.identity;
  const etag = encoding === "identity" ? `"${rep.hash}"` : `"${rep.hash}-${encoding === "br" ? "br" : "gz"}"`;
  const headers: string[] = [
    "ETag", etag,
    "Cache-Control", `public, max-age=${ttl}`,
    "Vary", "Accept-Encoding",
    "Access-Control-Allow-Origin", "*",
    ...extra,
  ];
  const inm = req.headers["if-none-match"];
  if (inm !== undefined && etagMatches(inm, rep.hash)) {
    res.writeHead(304, headers);
    res.end();
    return [304, 0];
  }
  headers.push("Content-Type", contentType, "Content-Length", String(body.length));
  if (encoding !== "identity") headers.push("Content-Encoding", encoding);
  if (contentType !== JSON_TYPE) headers.push("X-Content-Type-Options", "nosniff");
  res.writeHead(200, headers);
  if (req.method === "HEAD") {
    res.end();
    return [200, 0];
  }
  res.end(body);
  return [200, body.length];
}

/** If-None-Match: `*`, or any listed tag (weak or strong, of any encoding) naming this body. */
export function etagMatches(header: string, hash: string): boolean {
  if (header.trim() === "*") return true;
  for (const raw of header.split(",")) {
    const tag = raw.trim().replace(/^W\//, "").replace(/^"|"$/g, "").replace(/-(br|gz)$/, "");
    if (tag === hash) return true;
  }
  return false;
}
