// Writing responses: a body found for a /v1/ request sent as the variant it asks for; a representation with ETag,
// caching and content negotiation (Accept-Encoding: brotli, then gzip, then identity); a problem for every error.
import type { IncomingMessage, ServerResponse } from "node:http";
import { CALLBACK_RE } from "../../api/parameter-rules.ts";
import type { ApiError, Jsonp } from "../../errors.ts";
import { renderProblem } from "../../errors.ts";
import type { Admitted, RequestInfo } from "../admission/admission.ts";
import { acceptsBrotli, negotiateEncoding } from "./accept-encoding.ts";
import { JSON_TYPE, Missing } from "./response-body.ts";
import type { Found, Representation } from "./response-body.ts";
import { writeOk } from "./response-head.ts";
import { isScratch, release } from "./scratch.ts";
import type { createVariants } from "./variants.ts";

/** How a representation is sent. */
export interface SendOptions {
  /** Seconds it stays fresh (`Cache-Control: public, max-age`). */
  ttl: number;
  /** More header names and values (RateLimit-*), flat. */
  headers: readonly string[];
  /** Whether it answers a key (KEYED_HEADERS); a document that needs none does not vary with one. */
  keyed: boolean;
}

/**
 * What a response a cache may keep says when it answers a key: that it varies with the headers a key may come in
 * (besides the encoding), so that an RFC 9111 cache keyed on the URL never hands a response to a key sent in a header
 * to a request without it (a key in the query is in the URL already; the shipped fronts, which check keys
 * themselves, keep one copy for every key: docs/deploy.md); and that a page's script may read every header of it
 * (the console, RateLimit-*, ETag). The same on every such response, whichever way its key came: a front's copy is
 * handed to requests of every kind.
 */
const KEYED_VARY = "Accept-Encoding, Authorization, X-Api-Key";
/** The same for a problem a cache may keep (it exposes its headers already: renderProblem). */
const KEYED_PROBLEM_HEADERS: readonly string[] = ["Vary", "Authorization, X-Api-Key"];

/**
 * Returns send(req, res, found, a, info, headers, nowMs): a body found for a /v1/ request (a snapshot resource, or a
 * search page) sent as the variant `a` asks for (affid, JSONP, encoding), or its 404, fresh until the answer next
 * changes.
 */
export function foundSender({ variants, maxAge }: { variants: ReturnType<typeof createVariants>; maxAge: number }) {
  return (
    req: IncomingMessage,
    res: ServerResponse,
    found: Found | Missing,
    a: Admitted,
    info: RequestInfo,
    headers: string[],
    nowMs: number,
  ): [status: number, bytes: number] => {
    const { changesAt } = found;
    const ttl =
      changesAt === null ? maxAge : Math.max(0, Math.min(maxAge, Math.floor((changesAt * 1000 - nowMs) / 1000)));
    if (found instanceof Missing) {
      // A 404 a cache may keep (a sale that has ended): kept apart by the key's headers like any keyed answer.
      for (let i = 0; i < KEYED_PROBLEM_HEADERS.length; i++) headers.push(KEYED_PROBLEM_HEADERS[i]!);
      return sendProblem(req, res, found.error, headers, jsonpOf(info.query), ttl);
    }
    const { body, gzip, perRequest } = found;
    // Without affid or callback the body itself is sent; a variant otherwise (variants.ts).
    const rep: Representation =
      !a.affid && !a.callback
        ? { body, contentType: JSON_TYPE, gzip, brotli: null, scratch: perRequest }
        : variants.represent({ body, changesAt, gzip, perRequest }, a.affid, a.callback);
    return sendRepresentation(req, res, rep, { ttl, headers, keyed: true });
  };
}

/**
 * Writes a 200 (or a 304 when If-None-Match matches) with the best encoding the client accepts; returns [status, bytes].
 * A body without a gzip variant that can have one (`rep.gzip`) gets it only when it is about to be sent to a
 * client that accepts it: never for a 304 or a client (or CDN) asking for identity. One that may have brotli made
 * for it (`rep.brotli`, a sale list with a new affid) is asked to make it when the client accepts brotli.
 */
export function sendRepresentation(
  req: IncomingMessage,
  res: ServerResponse,
  { body: rep, contentType, gzip: gzipOnDemand, brotli: brotliOnDemand, scratch }: Representation,
  { ttl, headers: extra, keyed }: SendOptions,
): [number, number] {
  const accept = req.headers["accept-encoding"];
  if (rep.br === null && brotliOnDemand !== null && acceptsBrotli(accept)) brotliOnDemand();
  const canGzip = rep.gzip !== null || gzipOnDemand !== null;
  const encoding = negotiateEncoding(accept, rep.br !== null, canGzip);
  const etags = (rep.etags ??= [`"${rep.hash}"`, `"${rep.hash}-gz"`, `"${rep.hash}-br"`]);
  const headers: string[] = [
    "ETag",
    etags[encoding === "identity" ? 0 : encoding === "gzip" ? 1 : 2],
    "Cache-Control",
    cacheControl(ttl),
    "Vary",
    keyed ? KEYED_VARY : "Accept-Encoding",
    "Access-Control-Allow-Origin",
    "*",
  ];
  if (keyed) headers.push("Access-Control-Expose-Headers", "*");
  for (let i = 0; i < extra.length; i++) headers.push(extra[i]!);
  const inm = req.headers["if-none-match"];
  if (inm !== undefined && etagMatches(inm, rep.hash)) {
    res.writeHead(304, headers);
    res.end();
    return [304, 0];
  }
  const head = req.method === "HEAD";
  // A HEAD's Content-Length is the GET's, so the gzip is made for it too; HEADs of search pages are rare.
  const body = encoding === "br" ? rep.br! : encoding === "gzip" ? (rep.gzip ?? gzipOnDemand!()) : rep.identity;
  headers.push("Content-Type", contentType, "Content-Length", String(body.length));
  if (encoding !== "identity") headers.push("Content-Encoding", encoding);
  if (contentType !== JSON_TYPE) headers.push("X-Content-Type-Options", "nosniff");
  writeOk(res, headers, body.length);
  if (head) {
    res.end();
    if (scratch !== false) release(body);
    return [200, 0];
  }
  // A body made for this response goes back to the scratch pool once written ('finish': the system has all of it).
  if (scratch !== false && isScratch(body)) res.end(body, () => release(body));
  else res.end(body);
  return [200, body.length];
}

// Header values are made once and reused: node checks every value's characters on every response, which costs
// less on a flat string it has seen than on a freshly concatenated one.
const CACHE_CONTROL: string[] = [];

/** `public, max-age=<ttl>`. */
function cacheControl(ttl: number): string {
  return (CACHE_CONTROL[ttl] ??= `public, max-age=${ttl}`);
}

/** If-None-Match: `*`, or any listed tag (weak or strong, of any encoding) naming this body. */
function etagMatches(header: string, hash: string): boolean {
  if (header.trim() === "*") return true;
  for (const raw of header.split(",")) {
    const tag = raw
      .trim()
      .replace(/^W\//, "")
      .replace(/^"|"$/g, "")
      .replace(/-(br|gz)$/, "");
    if (tag === hash) return true;
  }
  return false;
}

/** A rendered problem, ready to send: its status, flat header list and body. */
interface RenderedProblem {
  status: number;
  headers: string[];
  body: Buffer;
}

/**
 * Problems rendered so far, by everything that decides their bytes. Rejections repeat (the same 401 to a client
 * without a key, the same 429 with the same Retry-After), and serialising each anew cost more than sending it. A
 * detail may hold a client's text (an unknown store's name), so the map is emptied when full.
 */
const rendered = new Map<string, RenderedProblem>();
const RENDERED_MAX = 1_000;
/** The plain (not JSONP) rendering of an error object reused for every such rejection (a 404 remembered, a 429). */
const renderedOf = new WeakMap<ApiError, RenderedProblem>();

function problemOf(error: ApiError, jsonp: Jsonp | null): RenderedProblem {
  if (!jsonp) {
    let problem = renderedOf.get(error);
    if (!problem) renderedOf.set(error, (problem = renderedBy(error, null)));
    return problem;
  }
  return renderedBy(error, jsonp);
}

function renderedBy(error: ApiError, jsonp: Jsonp | null): RenderedProblem {
  let key = `${error.status}\0${error.code}\0${error.detail}\0${jsonp ? `${jsonp.callback}\0${jsonp.suppress}` : ""}`;
  for (const name in error.headers) key += `\0${name}\0${error.headers[name]}`;
  let problem = rendered.get(key);
  if (!problem) {
    const p = renderProblem(error, jsonp);
    problem = { status: p.status, headers: Object.entries(p.headers).flat(), body: p.body };
    if (rendered.size >= RENDERED_MAX) rendered.clear();
    rendered.set(key, problem);
  }
  return problem;
}

/** An error for a request with a valid `callback` is sent as a JSONP call (see Jsonp in errors.ts). */
export function jsonpOf(query: Map<string, string[]> | null): Jsonp | null {
  const callback = query?.get("callback");
  if (callback?.length !== 1 || !CALLBACK_RE.test(callback[0]!)) return null;
  return { callback: callback[0]!, suppress: query!.get("suppress_response_codes")?.[0] === "1" };
}

/**
 * Writes the problem response of an error (as a JSONP call when `jsonp` is given); returns [status, bytes]. Errors
 * are `no-store`, but for `ttl` (seconds) given: a 404 known to hold that long is `public, max-age=<ttl>`.
 */
export function sendProblem(
  req: IncomingMessage,
  res: ServerResponse,
  error: ApiError,
  extra: readonly string[],
  jsonp: Jsonp | null,
  ttl: number | null = null,
): [number, number] {
  const problem = problemOf(error, jsonp);
  let headers = extra.length === 0 ? problem.headers : problem.headers.concat(extra);
  if (ttl !== null) {
    headers = headers === problem.headers ? headers.slice() : headers;
    const at = headers.indexOf("Cache-Control");
    if (at >= 0) headers[at + 1] = cacheControl(ttl);
  }
  res.writeHead(problem.status, headers);
  if (req.method === "HEAD") {
    res.end();
    return [problem.status, 0];
  }
  res.end(problem.body);
  return [problem.status, problem.body.length];
}

/**
 * A CORS preflight's answer (Fetch standard, section 3.2.3), the same for every path and origin: a script on any
 * page may send GET or HEAD with a key in Authorization or X-Api-Key, and revalidate with If-None-Match; a
 * browser may keep this answer for a day.
 */
const PREFLIGHT = [
  "Access-Control-Allow-Origin",
  "*",
  "Access-Control-Allow-Methods",
  "GET, HEAD",
  "Access-Control-Allow-Headers",
  "Authorization, X-Api-Key, If-None-Match",
  "Access-Control-Max-Age",
  "86400",
  "Cache-Control",
  "public, max-age=86400",
];

/** Answers a CORS preflight (checkRequest says which requests are): 204 with PREFLIGHT's headers. */
export function sendPreflight(res: ServerResponse): [number, number] {
  res.writeHead(204, PREFLIGHT);
  res.end();
  return [204, 0];
}

/** A text response that is never cached (the metrics exposition, a key's usage), with `extra` headers. */
export function sendText(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  contentType: string,
  text: string,
  extra: readonly string[] = [],
): [number, number] {
  const body = Buffer.from(text);
  res.writeHead(status, [
    "Content-Type",
    contentType,
    "Content-Length",
    String(body.length),
    "Cache-Control",
    "no-store",
    ...extra,
  ]);
  res.end(req.method === "HEAD" ? undefined : body);
  return [status, req.method === "HEAD" ? 0 : body.length];
}

/** A small JSON response that is never cached (health checks). */
export function sendJson(req: IncomingMessage, res: ServerResponse, status: number, value: unknown): [number, number] {
  return sendText(req, res, status, JSON_TYPE, JSON.stringify(value));
}
