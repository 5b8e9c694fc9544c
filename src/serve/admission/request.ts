// Parsing a request target into a decoded path and query parameters, refusing anything malformed.
import { AFFID_RE, CALLBACK_RE } from "../../api/parameter-rules.ts";
import { ApiError, invalidParameter } from "../../errors.ts";

/** Longest request target accepted (path and query), in bytes; longer is a 414. */
export const DEFAULT_MAX_URL_LENGTH = 4096;
/** Most query parameters accepted in one request; more is a 400. */
export const MAX_QUERY_PARAMS = 64;

export interface ParsedTarget {
  /** Decoded path, e.g. `/v1/sales/active.json`. */
  path: string;
  query: Map<string, string[]>;
}

// Control bytes, and the characters that never belong in a resource path once decoded.
const BAD_PATH = /[\u0000-\u001f\u007f\\]/;
// Encoded slash or backslash: a decoded path must not gain separators it did not have. (An encoded NUL or other
// control byte decodes into one, and BAD_PATH refuses it with a 400 like every other control character.)
const BAD_ESCAPE = /%(2f|5c)/i;
const CONTROL = /[\u0000-\u001f\u007f]/;
// What makes a query string need decoding or checking pair by pair.
const NEEDS_DECODING = /[%+\u0000-\u001f\u007f]/;
// A run of two or more slashes in the raw path, merged into one before routing (nginx's `merge_slashes on`).
const SLASH_RUN = /\/{2,}/g;

/** Percent-decodes `text`; `+` is a space only in a query (form encoding), and a literal `+` in a path. */
function decode(text: string, what: string, plusIsSpace: boolean): string {
  const plus = plusIsSpace && text.includes("+");
  if (!plus && !text.includes("%")) return text;
  try {
    return decodeURIComponent(plus ? text.replace(/\+/g, " ") : text);
  } catch {
    throw new ApiError(400, "invalid_request", `${what} has invalid percent-encoding or is not UTF-8`);
  }
}

/**
 * Splits and decodes a request target (origin-form, or absolute-form as RFC 9112 requires servers to accept).
 * Runs of `/` in the raw path are merged into one (`/v1//sales` is `/v1/sales`); encoded slashes (`%2F`) are
 * refused before decoding and dot segments are left as they are, so neither is merged or normalised.
 */
export function parseTarget(target: string, maxLength = DEFAULT_MAX_URL_LENGTH): ParsedTarget {
  if (target.length > maxLength)
    throw new ApiError(414, "uri_too_long", `the request target is longer than ${maxLength} bytes`);
  let rest = target;
  if (!rest.startsWith("/")) {
    const m = /^https?:\/\/[^/?#]*/i.exec(rest);
    if (!m) throw new ApiError(400, "invalid_request", "the request target must be a path starting with /");
    rest = rest.slice(m[0].length) || "/";
  }
  const hash = rest.indexOf("#");
  if (hash >= 0) rest = rest.slice(0, hash);
  const q = rest.indexOf("?");
  let rawPath = q >= 0 ? rest.slice(0, q) : rest;
  if (rawPath.includes("//")) rawPath = rawPath.replace(SLASH_RUN, "/");
  const escaped = rawPath.includes("%");
  if (escaped && BAD_ESCAPE.test(rawPath)) throw new ApiError(404, "not_found", "no such resource");
  const path = escaped ? decode(rawPath, "the path", false) : rawPath;
  if (BAD_PATH.test(path))
    throw new ApiError(400, "invalid_request", "the path contains control characters or backslashes");
  return { path, query: q >= 0 ? parseQuery(rest.slice(q + 1)) : new Map<string, string[]>() };
}

/** Parses `a=1&b=2&a=3` into `{a: [1, 3], b: [2]}`, decoding each name and value. */
export function parseQuery(query: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  if (query === "") return out;
  // The usual query (`apikey=...&affid=...`) has nothing to decode: one test here instead of three per pair.
  const plain = !NEEDS_DECODING.test(query);
  let count = 0;
  for (let start = 0; start <= query.length;) {
    let end = query.indexOf("&", start);
    if (end < 0) end = query.length;
    const from = start;
    start = end + 1;
    if (end === from) continue;
    if (++count > MAX_QUERY_PARAMS)
      throw new ApiError(400, "invalid_request", `more than ${MAX_QUERY_PARAMS} query parameters`);
    const eq = query.indexOf("=", from);
    let name = eq >= 0 && eq < end ? query.slice(from, eq) : query.slice(from, end);
    let value = eq >= 0 && eq < end ? query.slice(eq + 1, end) : "";
    if (!plain) {
      name = decode(name, "the query string", true);
      value = decode(value, "the query string", true);
    }
    if (!plain && (CONTROL.test(value) || CONTROL.test(name))) {
      throw new ApiError(400, "invalid_request", "the query string contains control characters");
    }
    const list = out.get(name);
    if (list) list.push(value);
    else out.set(name, [value]);
  }
  return out;
}

/** The one value of a parameter that may appear at most once; undefined when absent. */
export function single(query: Map<string, string[]>, name: string): string | undefined {
  const values = query.get(name);
  if (!values) return undefined;
  if (values.length > 1) throw invalidParameter(name, "must be given at most once");
  return values[0];
}

/** `affid` and `callback`, validated: the two parameters every endpoint takes besides the key. */
export function parseCommon(query: Map<string, string[]>): { affid: string; callback: string } {
  const affid = single(query, "affid") ?? "";
  if (query.has("affid") && !AFFID_RE.test(affid))
    throw invalidParameter("affid", "must be 1-64 characters of A-Z a-z 0-9 _ . -");
  const callback = single(query, "callback") ?? "";
  if (query.has("callback") && !CALLBACK_RE.test(callback)) {
    throw invalidParameter("callback", "must be a JavaScript name: [A-Za-z_$][A-Za-z0-9_$.]{0,63}");
  }
  return { affid, callback };
}
