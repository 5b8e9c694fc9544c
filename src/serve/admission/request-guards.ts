// The checks a request passes before admission (method, Host lines), the metrics token, and whether its errors are
// sent as JSONP.
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { ApiError } from "../../errors.ts";
import type { Jsonp } from "../../errors.ts";
import { CALLBACK_RE } from "../../api/parameter-rules.ts";

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

/** Checks an Authorization header against `Bearer <token>` in constant time. */
export function bearerCheck(token: string): (header: string | undefined) => boolean {
  const expected = createHash("sha256").update(`Bearer ${token}`).digest();
  return (header) => header !== undefined && timingSafeEqual(createHash("sha256").update(header).digest(), expected);
}

/** An error for a request with a valid `callback` is sent as a JSONP call (see Jsonp in errors.ts). */
export function jsonpOf(query: Map<string, string[]> | null): Jsonp | null {
  const callback = query?.get("callback");
  if (callback?.length !== 1 || !CALLBACK_RE.test(callback[0]!)) return null;
  return { callback: callback[0]!, suppress: query!.get("suppress_response_codes")?.[0] === "1" };
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
