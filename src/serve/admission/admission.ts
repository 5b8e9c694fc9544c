// Admission: from a request to what it asks for, or the error that answers it: the method and Host lines checked,
// the target parsed, the API key checked, the rate limits applied in the order that keeps guessing keys slow, the
// parameters and path checked.
import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
import { ApiError, notFound } from "../../errors.ts";
import type { LoadedSegment } from "../../snapshot/load.ts";
import type { KeyRing } from "./api-key-check.ts";
import { matchEndpoint, ROUTE_INDEX } from "../../api/routing.ts";
import type { RouteIndex } from "../../api/routing.ts";
import type { Answer, Endpoint } from "../../api/endpoints.ts";
import { pushRateLimitHeaders, takeToken } from "./rate-limit.ts";
import type { Take } from "./rate-limit.ts";
import { createTrustedPeer } from "./client-address.ts";
import { createCredentials } from "./credentials.ts";
import type { Credential, CredentialOptions } from "./credentials.ts";
import { DEFAULT_MAX_URL_LENGTH, parseCommon, parseTarget } from "./request.ts";
import type { ParsedTarget } from "./request.ts";
import { createSeenOnce } from "../bodies/fast-hash.ts";
import { headerKeyOf } from "./presented-key.ts";
import { parseSearchParams } from "./search-params.ts";
import type { SearchParams } from "./search-params.ts";

export type { Credential };

export interface AdmissionOptions extends CredentialOptions {
  /** Longest request target, bytes. Default DEFAULT_MAX_URL_LENGTH (4096). */
  maxUrlLength?: number;
}

/** An admitted /v1/ request: who asks, for what, in which form. */
export interface Admitted {
  path: string;
  /** Its route class, for metrics. */
  route: RouteIndex;
  query: Map<string, string[]>;
  credential: Credential;
  affid: string;
  callback: string;
  /** Which responder answers it (the endpoint table's `answer`; "resource" for a /v1/ path no endpoint has). */
  answer: Answer;
  /** false: the request takes no token of its key's rate (the table's `rateLimited`). */
  rateLimited: boolean;
  /** The path's states, for a resource; null otherwise. */
  states: readonly LoadedSegment[] | null;
  /** The search's parameters (checked), for a search; null otherwise. */
  search: SearchParams | null;
  /** The 404 of a path that does not exist (remembered like any other answer); null otherwise. */
  missing: ApiError | null;
}

/** What the handler learns of a request as admission goes, for its log line and its error response. */
export interface RequestInfo {
  /** The decoded path, once parsed ("" before). */
  path: string;
  /** Its route class, once parsed ("other" before). */
  route: RouteIndex;
  /** The key's name, once authenticated (a replaced key's with PREVIOUS_SUFFIX: its usage name, Credential.usage). */
  key: string | undefined;
  /** The query, once parsed: an error answers a valid `callback` as JSONP. */
  query: Map<string, string[]> | null;
}

/** One snapshot's paths, as admission sees them (null while no snapshot is loaded). */
export interface Paths {
  /** The states of `path`; throws a 404 naming why there are none. */
  statesOf(path: string): readonly LoadedSegment[];
}

/** Admits requests under one key ring and one snapshot; a reload makes a new gate, forgetting every target. */
export interface Gate {
  /**
   * The request's keyed endpoint (a /v1/ path), or the answer of an endpoint without a key (the table's `access`:
   * "open" to anyone, "proxies" from a proxy of `trustProxy` only, a 404 from any other peer as if there were no such
   * path); or the ApiError that answers it. Rejections a client can repeat at will
   * (401, 429, 404) are returned, not thrown: a throw cost more than the rest of such an answer. Malformed targets
   * and parameters (400s) are thrown. RateLimit-* headers go onto `headers`.
   */
  admit(req: IncomingMessage, nowMs: number, headers: string[], info: RequestInfo): Admitted | Answer | ApiError;
  /**
   * A front's key check (GET /edge/key): the key its client presented, as a request's key is authenticated (a key
   * that is not valid counts against the client's address, named by the front's X-Forwarded-For), taking no token:
   * the front applies the key's rate itself. The front puts the client's key in the check's query: its `apikey`
   * parameters, and its X-Api-Key and Authorization headers' values as `x_api_key` and `authorization` (so that the
   * front's cache of checks, keyed by their URL, keeps every key apart). The check's own headers are not read: a
   * front that does not pass them on is refused a header's key, never answered for a request without one.
   */
  checkKey(req: IncomingMessage, query: Map<string, string[]>, nowMs: number): Credential | ApiError;
  /** Targets remembered now. */
  readonly remembered: number;
  /** The key's bucket now, taking nothing (GET /v1/usage.json). */
  burstOf(credential: Credential, nowMs: number): Take;
}

const ALLOW = "GET, HEAD";

/**
 * The method and the Host lines, checked before anything is parsed. Returns true for a CORS preflight (an OPTIONS
 * with Access-Control-Request-Method: a browser asking whether its script may send a key in a header), which
 * sendPreflight answers; any other method but GET and HEAD is a 405.
 */
export function checkRequest(req: IncomingMessage): boolean {
  const method = req.method ?? "GET";
  const preflight = method === "OPTIONS" && req.headers["access-control-request-method"] !== undefined;
  if (method !== "GET" && method !== "HEAD" && !preflight)
    throw new ApiError(405, "method_not_allowed", `${method} is not allowed; use GET or HEAD`, { Allow: ALLOW });
  // RFC 9112 section 3.2: a request with more than one Host field line is a 400.
  if (hostLines(req.rawHeaders) > 1) throw new ApiError(400, "invalid_request", "more than one Host header");
  return preflight;
}

/** How many Host field lines a request has (req.headers keeps only the first). */
function hostLines(raw: readonly string[]): number {
  let n = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    // Compared letter by letter (ASCII case folded with | 0x20) rather than lowercased into a new string.
    if (
      name.length === 4 &&
      (name.charCodeAt(0) | 0x20) === 0x68 &&
      (name.charCodeAt(1) | 0x20) === 0x6f &&
      (name.charCodeAt(2) | 0x20) === 0x73 &&
      (name.charCodeAt(3) | 0x20) === 0x74
    )
      n++;
  }
  return n;
}

/**
 * The headers' key (headerKeyOf, presented-key.ts): undefined at the cost of two property reads when a request has
 * neither header.
 */
function headerKeyOfRequest(headers: IncomingHttpHeaders): string | ApiError | undefined {
  const x = headers["x-api-key"];
  const a = headers.authorization;
  if (x === undefined && a === undefined) return undefined;
  // node joins a repeated X-Api-Key into one value; typed as a list, as any header may be.
  return headerKeyOf(typeof x === "string" ? x : x?.join(", "), a);
}

/** Targets remembered per gate (the set is emptied when full), and the longest one remembered. */
const ADMITTED_MAX = 10_000;
/** Slots of the table of targets admitted once (64 KB): a target is remembered at its second admission. */
const ADMITTED_SEEN_SLOTS = 16_384;
/** Parsed targets kept for requests that were not admitted (see `parsed` in gate). */
const PARSED_MAX = 1_000;
const NOT_V1 = notFound("no such resource: the API's paths start with /v1/");
const ADMITTED_MAX_TARGET = 512;

/**
 * Returns gate(keys, paths): admission under one key ring and snapshot. The rate limits (per key, and failed
 * authentications per address) belong to the process and outlive gates; a gate's remembered targets do not.
 */
export function createAdmission(options: AdmissionOptions) {
  const maxUrlLength = options.maxUrlLength ?? DEFAULT_MAX_URL_LENGTH;
  const fromProxy = createTrustedPeer(options.trustProxy ?? []);
  const { authenticate, keyBuckets } = createCredentials(options);

  return function gate(keys: KeyRing, paths: Paths | null): Gate {
    // Targets answered once, by the exact target: clients poll the same URLs (a sale list with their key) and a CDN
    // revalidates them, so most requests skip parsing, the key lookup and the path lookup. Only targets with a
    // valid key and valid parameters, on a path that exists, are kept; the address's failure limit, the key's
    // rate limit and the clock still apply to every request.
    // A target is remembered when it is admitted a second time: a new affid on every request (normal traffic from
    // affiliates) is parsed and forgotten, not kept in the map until it is emptied (each kept target outlived the
    // young generation, and the map's insert and clear cost more than the parse).
    const remembered = new Map<string, Admitted>();
    const admittedBefore = createSeenOnce(ADMITTED_SEEN_SLOTS);
    /** Targets' paths and queries kept while they are refused again and again (a wrong key, a 429). */
    const parsed = new Map<string, ParsedTarget>();
    const refused = <E extends ApiError>(url: string, target: ParsedTarget, refusal: E): E => {
      if (url.length <= ADMITTED_MAX_TARGET && !parsed.has(url)) {
        if (parsed.size >= PARSED_MAX) parsed.clear();
        parsed.set(url, target);
      }
      return refusal;
    };

    return {
      get remembered() {
        return remembered.size;
      },
      burstOf: (credential, nowMs) => keyBuckets.peek(credential.name, credential.limit, nowMs),
      checkKey: (req, query, nowMs) =>
        authenticate(
          keys,
          req,
          query,
          headerKeyOf(query.get("x_api_key")?.[0], query.get("authorization")?.[0]),
          nowMs,
        ),
      admit(req, nowMs, headers, info) {
        const url = req.url ?? "/";
        // A key in a header: remembered by the key and the target (the target alone does not name the key); a
        // malformed one (null) is not remembered.
        const headerKey = headerKeyOfRequest(req.headers);
        const memo = headerKey === undefined ? url : typeof headerKey === "string" ? `${headerKey} ${url}` : null;
        // A remembered key whose grace period has ended is not taken from memory: authentication refuses it.
        let known = memo === null ? undefined : remembered.get(memo);
        if (known !== undefined && nowMs >= known.credential.until) known = undefined;
        const target = known ?? parsed.get(url) ?? parseTarget(url, maxUrlLength);
        const { path, query } = target;
        const match = known ? null : matchEndpoint(path);
        info.path = path;
        info.route = known?.route ?? match?.route ?? ROUTE_INDEX.other;
        info.query = query;
        if (!known) {
          const access = match?.endpoint.access;
          if (access === "open") return match!.endpoint.answer;
          if (access === "proxies") return fromProxy(req) ? match!.endpoint.answer : NOT_V1;
          if (!path.startsWith("/v1/")) return NOT_V1;
        }
        const credential = known?.credential ?? authenticate(keys, req, query, headerKey, nowMs);
        if (credential instanceof ApiError) return known ? credential : refused(url, target, credential);
        info.key = credential.usage;
        // An endpoint free of the key's rate limit (GET /v1/usage.json) says what the limit has left, taking nothing.
        if ((known ? known.rateLimited : match?.endpoint.rateLimited) === false)
          pushRateLimitHeaders(headers, credential.limit, keyBuckets.peek(credential.name, credential.limit, nowMs));
        else {
          const limited = takeToken(keyBuckets, credential.name, credential.limit, nowMs, headers);
          if (limited) return known ? limited : refused(url, target, limited);
        }
        if (known) return known.missing ?? known;
        // A /v1/ path no endpoint has is a resource: its 404 comes from the snapshot's paths (statesOf).
        const admitted = admitTarget(paths, path, info.route, match?.endpoint, query, credential);
        if (memo !== null && url.length <= ADMITTED_MAX_TARGET && admittedBefore(memo)) {
          if (remembered.size >= ADMITTED_MAX) remembered.clear();
          remembered.set(memo, admitted);
        }
        return admitted.missing ?? admitted;
      },
    };
  };
}

/** What an authenticated target asks for, from its path and query alone: what is remembered of it. */
function admitTarget(
  paths: Paths | null,
  path: string,
  route: RouteIndex,
  endpoint: Endpoint | undefined,
  query: Map<string, string[]>,
  credential: Credential,
): Admitted {
  const answer = endpoint?.answer ?? "resource";
  const rateLimited = endpoint?.rateLimited !== false;
  const { affid, callback } = parseCommon(query);
  if (!paths) throw new ApiError(503, "service_unavailable", "no snapshot is loaded yet", { "Retry-After": "5" });
  const search = answer === "search" ? parseSearchParams(query) : null;
  let states: readonly LoadedSegment[] | null = null;
  let missing: ApiError | null = null;
  if (answer === "resource") {
    try {
      states = paths.statesOf(path);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      missing = err;
    }
  }
  return { path, route, query, credential, affid, callback, answer, rateLimited, states, search, missing };
}
