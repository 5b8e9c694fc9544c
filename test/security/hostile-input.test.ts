// Hostile requests, byte for byte over raw sockets: the exact status (and problem code) of each, never a 5xx, never a file.
import { readdir } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProblemCode } from "../../src/errors.ts";
import { startServer } from "../../src/serve/http/server.ts";
import {
  buildRequest,
  KeepAliveConnection,
  NoResponseError,
  rawExchange,
  rawRequest,
} from "../../scripts/lib/raw-http.ts";
import type { RawResponse } from "../../scripts/lib/raw-http.ts";
import { startTestApi, T0 } from "../helpers/fixture.ts";
import type { TestApi } from "../helpers/fixture.ts";

/**
 * How to decide (a careful production API, in this order):
 * - the HTTP layer's caps first: a header block over 16 KB is 431; a request target over 4096 bytes is 414;
 * - bytes that are not HTTP/URI syntax at all (raw NUL, control bytes, spaces, non-ASCII, bad methods) are 400;
 * - percent-encoding that does not decode (`%zz`, truncated or invalid UTF-8) and decoded control characters
 *   are 400 invalid_request: the request is malformed, whatever resource it meant;
 * - a well-formed path that names no resource is 404, whether it looks like traversal (`..`, `%2e%2e`), an
 *   encoded separator (`%2f`, `%5c`) or a file that exists in the data directory: nothing is normalised, nothing
 *   is read from disk, and resource names never contain those segments;
 * - key problems are 401 (after the malformed-request checks, before any resource lookup).
 * Every case that is about something else carries the valid key, so that the status isolates the hostile part.
 */
interface HostileCase {
  name: string;
  method?: string;
  /** The request target, written byte for byte (latin1). `{key}` = the valid key. */
  target: string;
  headers?: Array<[string, string]>;
  status: number;
  /** The problem code of the body. */
  code?: ProblemCode;
  /** invalid_parameter: the parameter the detail must name first. */
  param?: string;
  /**
   * Refused by Node's HTTP parser (`clientError`) before the handler runs: today that answer has no body, so
   * `code` is checked only when a body is sent.
   */
  parser?: boolean;
}

const K = "apikey={key}";
const PAD = (n: number) => "a".repeat(n);
/** A target of exactly `n` bytes (with the key, in the query): `/v1/aaa...?apikey=<32>`. */
const targetOfLength = (n: number) => `/v1/${PAD(n - "/v1/?apikey=".length - 32)}?${K}`;

const CASES: HostileCase[] = [
  // -- dot segments: never normalised (a CDN in front might normalise differently: one URL, one meaning) --
  { name: "raw .. segment back into /v1/", target: `/v1/../v1/sales/active.json?${K}`, status: 404, code: "not_found" },
  { name: "raw . segment", target: `/v1/sales/./active.json?${K}`, status: 404, code: "not_found" },
  { name: "%2e%2e segment", target: `/v1/sales/%2e%2e/active.json?${K}`, status: 404, code: "not_found" },
  {
    name: "%2E%2E upper-case, out of /v1/",
    target: `/v1/%2E%2E/%2E%2E/etc/passwd?${K}`,
    status: 404,
    code: "not_found",
  },
  { name: "%2e%2e out of the root", target: `/%2e%2e/%2e%2e/etc/passwd?${K}`, status: 404, code: "not_found" },
  { name: ".%2e mixed", target: `/v1/sales/.%2e/.%2e/.%2e/keys.json?${K}`, status: 404, code: "not_found" },
  {
    name: "protocol-relative //host/ (merged: /evil.example/v1/...)",
    target: `//evil.example/v1/sales/active.json?${K}`,
    status: 404,
    code: "not_found",
  },

  // -- runs of slashes: merged in the raw path (nginx's merge_slashes), and nothing else loosens with them --
  { name: "double slash after /v1 is merged", target: `/v1//sales/active.json?${K}`, status: 200 },
  { name: "leading and triple slashes are merged", target: `//v1///products/1/detail.json?${K}`, status: 200 },
  { name: "a run of 4000 slashes is merged", target: `/${"/".repeat(4000)}v1/sales/active.json?${K}`, status: 200 },
  {
    name: "a run of slashes counts against the target cap before it is merged",
    target: `/${"/".repeat(4100)}v1/sales/active.json?${K}`,
    status: 414,
    code: "uri_too_long",
  },
  {
    name: "merged, then a .. segment: not normalised",
    target: `/v1//../v1/sales/active.json?${K}`,
    status: 404,
    code: "not_found",
  },
  {
    name: "merged, then %2e%2e out of /v1/",
    target: `//v1//%2e%2e//%2e%2e//keys.json?${K}`,
    status: 404,
    code: "not_found",
  },
  { name: "merged, then . segment", target: `/v1//.//sales/active.json?${K}`, status: 404, code: "not_found" },
  {
    name: "encoded slashes are not merged: /v1/%2F%2Fsales",
    target: `/v1/%2F%2Fsales/active.json?${K}`,
    status: 404,
    code: "not_found",
  },
  {
    name: "an encoded slash among raw ones: /v1//%2f//sales",
    target: `/v1//%2f//sales/active.json?${K}`,
    status: 404,
    code: "not_found",
  },
  {
    name: "raw slash then encoded slash: /v1/sales/%2factive.json",
    target: `/v1/sales/%2factive.json?${K}`,
    status: 404,
    code: "not_found",
  },
  {
    name: "merged, then an encoded backslash",
    target: `/v1//sales%5c%5cactive.json?${K}`,
    status: 404,
    code: "not_found",
  },
  {
    name: "merged, then a raw backslash",
    target: `/v1//sales\\active.json?${K}`,
    status: 400,
    code: "invalid_request",
  },
  { name: "merged, then %00", target: `//v1//sales//active.json%00?${K}`, status: 400, code: "invalid_request" },
  { name: "merged, then %zz", target: `/v1//sales//%zzactive.json?${K}`, status: 400, code: "invalid_request" },
  {
    name: "trailing double slash: a trailing slash once merged",
    target: `/v1/sales/active.json//?${K}`,
    status: 404,
    code: "not_found",
  },
  { name: "// alone is the root", target: `//?${K}`, status: 404, code: "not_found" },
  { name: "/v1// is the prefix itself", target: `/v1//?${K}`, status: 404, code: "not_found" },
  { name: "//keys.json", target: `//keys.json?${K}`, status: 404, code: "not_found" },
  { name: "//current//manifest.json", target: `//current//manifest.json?${K}`, status: 404, code: "not_found" },
  { name: "merged path, no key", target: "//v1//sales/active.json", status: 401, code: "api_key_missing" },
  {
    name: "merged path, bad rows",
    target: `/v1//products?q=boot&rows=0&${K}`,
    status: 400,
    code: "invalid_parameter",
    param: "rows",
  },
  { name: "absolute-form with a run of slashes", target: `http://127.0.0.1//v1//sales/active.json?${K}`, status: 200 },
  { name: "trailing slash", target: `/v1/sales/active.json/?${K}`, status: 404, code: "not_found" },
  { name: "upper-case version prefix", target: `/V1/sales/active.json?${K}`, status: 404, code: "not_found" },
  { name: "path parameter", target: `/v1/sales/active.json;jsessionid=1?${K}`, status: 404, code: "not_found" },

  // -- encoded separators: well-formed, but they make a segment that is no resource --
  { name: "encoded slash %2f", target: `/v1/sales%2factive.json?${K}`, status: 404, code: "not_found" },
  { name: "encoded slash %2F", target: `/v1%2Fsales%2Factive.json?${K}`, status: 404, code: "not_found" },
  { name: "encoded backslash %5c", target: `/v1/sales%5cactive.json?${K}`, status: 404, code: "not_found" },
  { name: "encoded traversal ..%2f", target: `/v1/..%2f..%2fkeys.json?${K}`, status: 404, code: "not_found" },
  {
    name: "raw backslash (not a URI character)",
    target: `/v1/sales\\active.json?${K}`,
    status: 400,
    code: "invalid_request",
  },
  { name: "raw backslash traversal", target: `/v1/..\\..\\keys.json?${K}`, status: 400, code: "invalid_request" },

  // -- NUL and control bytes: raw ones are refused by the parser; encoded ones decode to a path no resource can have.
  // %00 is a 400 like every other encoded control byte (%01, %1f, %7f): "the path contains control characters".
  { name: "%00 in the path", target: `/v1/sales/active.json%00?${K}`, status: 400, code: "invalid_request" },
  {
    name: "%00 before an extension",
    target: `/v1/products/1/detail.json%00.html?${K}`,
    status: 400,
    code: "invalid_request",
  },
  { name: "%01 in the path", target: `/v1/sales/%01active.json?${K}`, status: 400, code: "invalid_request" },
  { name: "%7f in the path", target: `/v1/sales/active.json%7f?${K}`, status: 400, code: "invalid_request" },
  {
    name: "%0d%0a (header injection) in the path",
    target: `/v1/sales/active.json%0d%0aSet-Cookie:%20a=b?${K}`,
    status: 400,
    code: "invalid_request",
  },
  {
    name: "raw NUL in the path",
    target: `/v1/sales/active\x00.json?${K}`,
    status: 400,
    code: "invalid_request",
    parser: true,
  },
  {
    name: "raw NUL in the query",
    target: `/v1/sales/active.json?${K}&affid=a\x00b`,
    status: 400,
    code: "invalid_request",
    parser: true,
  },
  {
    name: "raw control byte 0x01",
    target: `/v1/sales/\x01active.json?${K}`,
    status: 400,
    code: "invalid_request",
    parser: true,
  },
  {
    name: "raw DEL 0x7f",
    target: `/v1/sales/active.json\x7f?${K}`,
    status: 400,
    code: "invalid_request",
    parser: true,
  },
  { name: "raw tab", target: `/v1/sales/\tactive.json?${K}`, status: 400, code: "invalid_request", parser: true },
  {
    name: "bare space inside the target",
    target: `/v1/sales/ active.json?${K}`,
    status: 400,
    code: "invalid_request",
    parser: true,
  },
  { name: "%00 in a query value", target: `/v1/products?q=boot%00&${K}`, status: 400, code: "invalid_request" },
  { name: "%0a in a query name", target: `/v1/products?q=boot&x%0a=1&${K}`, status: 400, code: "invalid_request" },

  // -- invalid percent-encoding and invalid UTF-8 --
  { name: "%zz in the path", target: `/v1/sales/%zzactive.json?${K}`, status: 400, code: "invalid_request" },
  {
    name: "truncated escape % at the end of the path",
    target: `/v1/sales/active.json%?${K}`,
    status: 400,
    code: "invalid_request",
  },
  {
    name: "truncated UTF-8 %e0%a4 in the path",
    target: `/v1/sales/%e0%a4/active.json?${K}`,
    status: 400,
    code: "invalid_request",
  },
  {
    name: "overlong UTF-8 slash %c0%af",
    target: `/v1/sales/..%c0%af..%c0%afkeys.json?${K}`,
    status: 400,
    code: "invalid_request",
  },
  {
    name: "UTF-16 surrogate %ed%a0%80",
    target: `/v1/sales/%ed%a0%80/active.json?${K}`,
    status: 400,
    code: "invalid_request",
  },
  {
    name: "lone continuation byte %80",
    target: `/v1/products/%80/detail.json?${K}`,
    status: 400,
    code: "invalid_request",
  },
  { name: "%zz in the query", target: `/v1/products?q=%zz&${K}`, status: 400, code: "invalid_request" },
  { name: "truncated UTF-8 in the query", target: `/v1/products?q=%e0%a4&${K}`, status: 400, code: "invalid_request" },
  {
    name: "invalid UTF-8 %ff in the query",
    target: `/v1/products?q=boot%ff&${K}`,
    status: 400,
    code: "invalid_request",
  },
  {
    name: "invalid percent-encoding in the key itself",
    target: "/v1/sales/active.json?apikey=%zz",
    status: 400,
    code: "invalid_request",
  },
  {
    name: "raw non-ASCII bytes in the path",
    target: `/v1/sales/\xff\xfe/active.json?${K}`,
    status: 400,
    code: "invalid_request",
    parser: true,
  },
  {
    name: "raw non-ASCII bytes in the query",
    target: `/v1/products?q=\xe9t\xe9&${K}`,
    status: 400,
    code: "invalid_request",
    parser: true,
  },

  // -- caps: 4096 bytes of target (path and query together), 16 KB of headers --
  {
    name: "target of exactly 4096 bytes is let through (404)",
    target: targetOfLength(4096),
    status: 404,
    code: "not_found",
  },
  { name: "overlong path: 4097 bytes", target: targetOfLength(4097), status: 414, code: "uri_too_long" },
  { name: "overlong path: 10 000 bytes", target: `/v1/${PAD(10_000)}?${K}`, status: 414, code: "uri_too_long" },
  {
    name: "overlong query: 5 000 bytes",
    target: `/v1/products?q=boot&${K}&pad=${PAD(5_000)}`,
    status: 414,
    code: "uri_too_long",
  },
  {
    name: "overlong query without a key",
    target: `/v1/sales/active.json?pad=${PAD(5_000)}`,
    status: 414,
    code: "uri_too_long",
  },
  // The parser counts the request line against the 16 KB header cap, and refuses before the handler sees the
  // target; 431 (a 4xx that closes the connection) is the best node's parser allows for a 20 KB target.
  {
    name: "target over the header cap too: 20 000 bytes",
    target: `/v1/${PAD(20_000)}`,
    status: 431,
    code: "headers_too_large",
    parser: true,
  },
  {
    name: "one header of 17 KB",
    target: `/v1/sales/active.json?${K}`,
    headers: [["X-Big", PAD(17 * 1024)]],
    status: 431,
    code: "headers_too_large",
    parser: true,
  },
  {
    name: "40 headers of 500 bytes (20 KB)",
    target: `/v1/sales/active.json?${K}`,
    headers: Array.from({ length: 40 }, (_, i): [string, string] => [`X-Pad-${i}`, PAD(500)]),
    status: 431,
    code: "headers_too_large",
    parser: true,
  },
  {
    name: "huge Cookie header",
    target: `/v1/sales/active.json?${K}`,
    headers: [["Cookie", `a=${PAD(20_000)}`]],
    status: 431,
    code: "headers_too_large",
    parser: true,
  },
  {
    name: "headers just under the cap are served",
    target: `/v1/sales/active.json?${K}`,
    headers: [["X-Big", PAD(15 * 1024)]],
    status: 200,
  },

  // -- the key --
  { name: "no key", target: "/v1/sales/active.json", status: 401, code: "api_key_missing" },
  { name: "empty key", target: "/v1/sales/active.json?apikey=", status: 401, code: "api_key_missing" },
  {
    name: "duplicated apikey (same value)",
    target: `/v1/sales/active.json?${K}&${K}`,
    status: 401,
    code: "api_key_invalid",
  },
  {
    name: "duplicated apikey (valid + empty)",
    target: `/v1/sales/active.json?${K}&apikey=`,
    status: 401,
    code: "api_key_invalid",
  },
  {
    name: "duplicated apikey (empty + valid)",
    target: `/v1/sales/active.json?apikey=&${K}`,
    status: 401,
    code: "api_key_invalid",
  },
  { name: "key with a trailing space", target: `/v1/sales/active.json?${K}%20`, status: 401, code: "api_key_invalid" },
  { name: "key of 33 characters", target: `/v1/sales/active.json?${K}x`, status: 401, code: "api_key_invalid" },
  {
    name: "well-formed unknown key",
    target: `/v1/sales/active.json?apikey=${"Z".repeat(32)}`,
    status: 401,
    code: "api_key_invalid",
  },
  {
    name: "key in a differently-cased parameter is no key",
    target: "/v1/sales/active.json?APIKEY={key}",
    status: 401,
    code: "api_key_missing",
  },
  {
    name: "key after a wrong separator (&) is no key",
    target: "/v1/sales/active.json&apikey={key}",
    status: 401,
    code: "api_key_missing",
  },
  {
    name: "key in an Authorization header of another scheme is no key",
    target: "/v1/sales/active.json",
    headers: [["Authorization", "Basic {key}"]],
    status: 401,
    code: "api_key_missing",
  },
  {
    name: "a key in the query and another in X-Api-Key",
    target: "/v1/sales/active.json?apikey={key}",
    headers: [["X-Api-Key", "A".repeat(32)]],
    status: 400,
    code: "invalid_request",
  },
  {
    name: "a key in X-Api-Key and another as a bearer token",
    target: "/v1/sales/active.json",
    headers: [
      ["X-Api-Key", "{key}"],
      ["Authorization", `Bearer ${"A".repeat(32)}`],
    ],
    status: 400,
    code: "invalid_request",
  },
  {
    name: "X-Api-Key of 12,000 letters (within the 16 KB of headers)",
    target: "/v1/sales/active.json",
    headers: [["X-Api-Key", "A".repeat(12_000)]],
    status: 401,
    code: "api_key_invalid",
  },
  {
    name: "no key: a file in the data dir is still a 404 outside /v1/",
    target: "/current/manifest.json",
    status: 404,
    code: "not_found",
  },

  // -- rows / start beyond integer range (search) --
  {
    name: "rows=99999999999999999999",
    target: `/v1/products?q=boot&rows=99999999999999999999&${K}`,
    status: 400,
    code: "invalid_parameter",
    param: "rows",
  },
  { name: "rows=0", target: `/v1/products?q=boot&rows=0&${K}`, status: 400, code: "invalid_parameter", param: "rows" },
  {
    name: "rows=101",
    target: `/v1/products?q=boot&rows=101&${K}`,
    status: 400,
    code: "invalid_parameter",
    param: "rows",
  },
  {
    name: "rows=-1",
    target: `/v1/products?q=boot&rows=-1&${K}`,
    status: 400,
    code: "invalid_parameter",
    param: "rows",
  },
  {
    name: "rows=1.5",
    target: `/v1/products?q=boot&rows=1.5&${K}`,
    status: 400,
    code: "invalid_parameter",
    param: "rows",
  },
  {
    name: "rows=0x10",
    target: `/v1/products?q=boot&rows=0x10&${K}`,
    status: 400,
    code: "invalid_parameter",
    param: "rows",
  },
  {
    name: "rows=+5",
    target: `/v1/products?q=boot&rows=%2B5&${K}`,
    status: 400,
    code: "invalid_parameter",
    param: "rows",
  },
  {
    name: "rows given twice",
    target: `/v1/products?q=boot&rows=5&rows=6&${K}`,
    status: 400,
    code: "invalid_parameter",
    param: "rows",
  },
  {
    name: "start=-1",
    target: `/v1/products?q=boot&start=-1&${K}`,
    status: 400,
    code: "invalid_parameter",
    param: "start",
  },
  {
    name: "start=1e3",
    target: `/v1/products?q=boot&start=1e3&${K}`,
    status: 400,
    code: "invalid_parameter",
    param: "start",
  },
  {
    name: "start=2147483648",
    target: `/v1/products?q=boot&start=2147483648&${K}`,
    status: 400,
    code: "invalid_parameter",
    param: "start",
  },
  {
    name: "start=Infinity",
    target: `/v1/products?q=boot&start=Infinity&${K}`,
    status: 400,
    code: "invalid_parameter",
    param: "start",
  },
  {
    name: "start= (empty)",
    target: `/v1/products?q=boot&start=&${K}`,
    status: 400,
    code: "invalid_parameter",
    param: "start",
  },
  {
    name: "start=2147483647 is in range (an empty page)",
    target: `/v1/products?q=boot&start=2147483647&${K}`,
    status: 200,
  },

  // -- huge repeated filters and parameter floods --
  {
    name: "store=women x 33 (over 32 values)",
    target: `/v1/products?q=boot&${"store=women&".repeat(33)}${K}`,
    status: 400,
    code: "invalid_parameter",
    param: "store",
  },
  {
    name: "store=women x 300 (over 64 parameters)",
    target: `/v1/products?q=boot&${"store=women&".repeat(300)}${K}`,
    status: 400,
    code: "invalid_request",
  },
  // 1000 x 12 bytes is over the 4096-byte target cap, which answers first (see the raised-cap suite for the 400).
  {
    name: "store=women x 1000 (over the target cap)",
    target: `/v1/products?q=boot&${"store=women&".repeat(1000)}${K}`,
    status: 414,
    code: "uri_too_long",
  },
  {
    name: "unknown store value",
    target: `/v1/products?q=boot&store=shoes&${K}`,
    status: 400,
    code: "invalid_parameter",
    param: "store",
  },
  {
    name: "q of 3000 characters",
    target: `/v1/products?q=${PAD(3000)}&${K}`,
    status: 400,
    code: "invalid_parameter",
    param: "q",
  },
  {
    name: "1000 empty pairs (&&&) are not parameters",
    target: `/v1/sales/active.json?${"&".repeat(1000)}${K}`,
    status: 200,
  },
  {
    name: "affid with a quote",
    target: `/v1/sales/active.json?affid=a%22b&${K}`,
    status: 400,
    code: "invalid_parameter",
    param: "affid",
  },
  {
    name: "affid of 65 characters",
    target: `/v1/sales/active.json?affid=${PAD(65)}&${K}`,
    status: 400,
    code: "invalid_parameter",
    param: "affid",
  },
  {
    name: "callback with script",
    target: `/v1/sales/active.json?callback=%3Cscript%3E&${K}`,
    status: 400,
    code: "invalid_parameter",
    param: "callback",
  },
  {
    name: "callback calling a function",
    target: `/v1/sales/active.json?callback=alert(1)&${K}`,
    status: 400,
    code: "invalid_parameter",
    param: "callback",
  },

  // -- request-target forms (RFC 9112 §3.2): absolute-form is served as origin-form; the authority is ignored --
  { name: "absolute-form http://127.0.0.1/...", target: `http://127.0.0.1/v1/sales/active.json?${K}`, status: 200 },
  { name: "absolute-form with another host", target: `http://evil.example:99/v1/sales/active.json?${K}`, status: 200 },
  {
    name: "absolute-form HTTP:// upper-case scheme",
    target: `HTTP://127.0.0.1/v1/sales/active.json?${K}`,
    status: 200,
  },
  {
    name: "absolute-form escaping /v1/ with ..",
    target: `http://127.0.0.1/v1/../keys.json?${K}`,
    status: 404,
    code: "not_found",
  },
  { name: "absolute-form without a path", target: `http://127.0.0.1?${K}`, status: 404, code: "not_found" },
  { name: "absolute-form of another scheme", target: `file:///etc/passwd`, status: 400, code: "invalid_request" },
  { name: "asterisk-form with GET", target: "*", status: 400, code: "invalid_request" },
  {
    name: "relative target without a leading slash",
    target: `v1/sales/active.json?${K}`,
    status: 400,
    code: "invalid_request",
    parser: true,
  },

  // -- methods: GET and HEAD only. An unknown method would be a 501 by RFC 9110, but that is a 5xx (it pages
  // someone) and node's parser refuses unknown method tokens before the handler runs: 400. --
  {
    name: "PROPFIND",
    method: "PROPFIND",
    target: `/v1/sales/active.json?${K}`,
    status: 405,
    code: "method_not_allowed",
  },
  {
    name: "TRACE (no echo of the request)",
    method: "TRACE",
    target: `/v1/sales/active.json?${K}`,
    status: 405,
    code: "method_not_allowed",
  },
  { name: "OPTIONS *", method: "OPTIONS", target: "*", status: 405, code: "method_not_allowed" },
  {
    name: "POST",
    method: "POST",
    target: `/v1/sales/active.json?${K}`,
    headers: [["Content-Length", "2"]],
    status: 405,
    code: "method_not_allowed",
  },
  {
    name: "DELETE",
    method: "DELETE",
    target: `/v1/products/1/detail.json?${K}`,
    status: 405,
    code: "method_not_allowed",
  },
  {
    name: "PUT on a data-dir file",
    method: "PUT",
    target: `/keys.json?${K}`,
    headers: [["Content-Length", "0"]],
    status: 405,
    code: "method_not_allowed",
  },
  { name: "SEARCH", method: "SEARCH", target: `/v1/products?q=boot&${K}`, status: 405, code: "method_not_allowed" },
  // CONNECT is parsed by node as a tunnel request and, with no 'connect' listener, the socket is dropped without
  // an answer; a load balancer in front turns a dropped connection into a 502. It must be answered: 405.
  {
    name: "CONNECT authority-form",
    method: "CONNECT",
    target: "127.0.0.1:22",
    status: 405,
    code: "method_not_allowed",
  },
  {
    name: "CONNECT with a path",
    method: "CONNECT",
    target: `/v1/sales/active.json?${K}`,
    status: 405,
    code: "method_not_allowed",
  },
  {
    name: "unknown method token",
    method: "FOO",
    target: `/v1/sales/active.json?${K}`,
    status: 400,
    code: "invalid_request",
    parser: true,
  },
  {
    name: "lower-case get",
    method: "get",
    target: `/v1/sales/active.json?${K}`,
    status: 400,
    code: "invalid_request",
    parser: true,
  },

  // -- broken framing and smuggling attempts --
  {
    name: "Transfer-Encoding and Content-Length together",
    target: `/v1/sales/active.json?${K}`,
    headers: [
      ["Transfer-Encoding", "chunked"],
      ["Content-Length", "3"],
    ],
    status: 400,
    code: "invalid_request",
    parser: true,
  },
  {
    name: "two different Content-Lengths",
    target: `/v1/sales/active.json?${K}`,
    headers: [
      ["Content-Length", "1"],
      ["Content-Length", "2"],
    ],
    status: 400,
    code: "invalid_request",
    parser: true,
  },
  {
    name: "control byte in a header value",
    target: `/v1/sales/active.json?${K}`,
    headers: [["X-A", "a\x00b"]],
    status: 400,
    code: "invalid_request",
    parser: true,
  },
  {
    name: "obsolete line folding",
    target: `/v1/sales/active.json?${K}`,
    headers: [["X-A", "a\r\n b"]],
    status: 400,
    code: "invalid_request",
    parser: true,
  },
  // RFC 9112 §3.2: "A server MUST respond with a 400 ... to any HTTP/1.1 request message that ... contains more
  // than one Host header field line"; node checks a missing Host but not a repeated one.
  {
    name: "two Host headers",
    target: `/v1/sales/active.json?${K}`,
    headers: [["Host", "evil.example"]],
    status: 400,
    code: "invalid_request",
  },

  // -- files that exist in the data directory but are not resources: none may be served --
  { name: "/current/manifest.json", target: `/current/manifest.json?${K}`, status: 404, code: "not_found" },
  {
    name: "/current/routes.json via /v1/..",
    target: `/v1/../current/routes.json?${K}`,
    status: 404,
    code: "not_found",
  },
  { name: "/current/search.idx", target: `/current/search.idx?${K}`, status: 404, code: "not_found" },
  { name: "/snapshots/", target: `/snapshots/?${K}`, status: 404, code: "not_found" },
  { name: "/keys.json", target: `/keys.json?${K}`, status: 404, code: "not_found" },
  { name: "/v1/keys.json", target: `/v1/keys.json?${K}`, status: 404, code: "not_found" },
  { name: "/v1/../../keys.json", target: `/v1/../../keys.json?${K}`, status: 404, code: "not_found" },
  { name: "/v1/%2e%2e/%2e%2e/keys.json", target: `/v1/%2e%2e/%2e%2e/keys.json?${K}`, status: 404, code: "not_found" },
  { name: "/v1/manifest.json", target: `/v1/manifest.json?${K}`, status: 404, code: "not_found" },
  { name: "/v1/routes.json", target: `/v1/routes.json?${K}`, status: 404, code: "not_found" },
  { name: "/v1/search.idx", target: `/v1/search.idx?${K}`, status: 404, code: "not_found" },
  { name: "/v1/current/manifest.json", target: `/v1/current/manifest.json?${K}`, status: 404, code: "not_found" },
  { name: "/etc/passwd", target: `/etc/passwd?${K}`, status: 404, code: "not_found" },
  { name: "/ (root)", target: `/?${K}`, status: 404, code: "not_found" },
  { name: "/v1 (no slash)", target: `/v1?${K}`, status: 404, code: "not_found" },
  { name: "/v1/ (the prefix itself)", target: `/v1/?${K}`, status: 404, code: "not_found" },
  { name: "/v1/sales/ (a directory of resources)", target: `/v1/sales/?${K}`, status: 404, code: "not_found" },
  { name: "/v2/sales/active.json", target: `/v2/sales/active.json?${K}`, status: 404, code: "not_found" },
];

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api.close());

const fill = (s: string) => s.replaceAll("{key}", api.key);

/** Sends a case with `Connection: close` and returns the response; a dropped connection is reported as status 0. */
async function send(
  c: HostileCase,
  method = c.method ?? "GET",
): Promise<RawResponse | { status: 0; raw: Buffer; headers: Record<string, string>; body: Buffer }> {
  // A minute between requests: per-key and per-address token buckets (on the injected clock) are always full,
  // so every status below is about the request itself. The fixture's sales are live for two days.
  api.clock.now += 60;
  const headers: Array<[string, string]> = [
    ["Host", "127.0.0.1"],
    ["Connection", "close"],
    ...(c.headers ?? []).map(([n, v]): [string, string] => [n, fill(v)]),
  ];
  const length = c.headers?.find(([n]) => n === "Content-Length")?.[1];
  const body = /^(POST|PUT)$/.test(method) && length ? Buffer.alloc(Number(length), "x") : undefined;
  try {
    return await rawRequest(api.server.port, buildRequest(method, fill(c.target), headers, body), {
      isHead: method === "HEAD",
    });
  } catch (err) {
    if (err instanceof NoResponseError) return { status: 0, raw: err.received, headers: {}, body: Buffer.alloc(0) };
    throw err;
  }
}

describe("hostile requests get the exact status", () => {
  beforeAll(() => {
    api.clock.now = T0;
  });

  it.each(CASES)("$name -> $status", async (c) => {
    const res = await send(c);
    expect(res.status, "a response, not a dropped connection").not.toBe(0);
    expect(res.status).toBeLessThan(500);
    expect(res.status).toBe(c.status);
    if (c.status === 405) expect(res.headers["allow"]).toBe("GET, HEAD");
    if (c.code && !(c.parser && res.body.length === 0)) {
      expect(res.headers["content-type"]).toBe("application/problem+json");
      const problem = JSON.parse(res.body.toString("utf8")) as { code: string; status: number; detail: string };
      expect(problem.code).toBe(c.code);
      expect(problem.status).toBe(c.status);
      if (c.param) expect(problem.detail.startsWith(`${c.param}:`), problem.detail).toBe(true);
    }
    if (c.status === 404)
      expect(res.body.toString("latin1")).not.toMatch(/"(format|keys|catalog_digest|resources|blobs)":/);
  });

  it("HEAD gets the same status as GET, with no body", async () => {
    const wrong: string[] = [];
    for (const c of CASES.filter((x) => !x.method && !x.parser)) {
      const res = await send(c, "HEAD");
      if (res.status !== c.status || res.body.length !== 0)
        wrong.push(`${c.name}: HEAD -> ${res.status} (${res.body.length} body bytes), expected ${c.status}`);
    }
    expect(wrong).toEqual([]);
  });
});

describe("merged slashes answer exactly as the single-slash form", () => {
  /** [the target with runs of slashes, its single-slash form]; `{key}` = the valid key. */
  const PAIRS: Array<[string, string]> = [
    [`/v1//sales/active.json?${K}`, `/v1/sales/active.json?${K}`],
    [`//v1///products/1/detail.json?${K}`, `/v1/products/1/detail.json?${K}`],
    [`/v1/sales//women/active.json?${K}`, `/v1/sales/women/active.json?${K}`],
    [`/v1/sales/women//boots//detail.json?${K}`, `/v1/sales/women/boots/detail.json?${K}`],
    [`///v1//products//categories.json?${K}&affid=A1`, `/v1/products/categories.json?${K}&affid=A1`],
    [`/v1//products?q=boot&${K}&callback=cb`, `/v1/products?q=boot&${K}&callback=cb`],
    [`/${"/".repeat(4000)}v1/sales/active.json?${K}`, `/v1/sales/active.json?${K}`],
    [`http://127.0.0.1//v1//sales/upcoming.json?${K}`, `/v1/sales/upcoming.json?${K}`],
    [`//healthz`, `/healthz`],
    [`/v1//sales//shoes/active.json?${K}`, `/v1/sales/shoes/active.json?${K}`],
    [`/v1//products//999//detail.json?${K}`, `/v1/products/999/detail.json?${K}`],
    ["//v1//sales/active.json", "/v1/sales/active.json"],
  ];

  /** GET at a fixed instant (unlike send(), which moves the clock), so that both forms see the same state. */
  const get = (target: string) =>
    rawRequest(
      api.server.port,
      buildRequest("GET", fill(target), [
        ["Host", "127.0.0.1"],
        ["Connection", "close"],
      ]),
    );

  it.each(PAIRS)("%s == %s", async (merged, single) => {
    api.clock.now = T0 + 60;
    const [a, b] = [await get(merged), await get(single)];
    expect(a.status).toBe(b.status);
    expect(a.headers["etag"]).toBe(b.headers["etag"]);
    expect(a.headers["content-type"]).toBe(b.headers["content-type"]);
    expect(a.body.toString("utf8")).toBe(b.body.toString("utf8"));
  });

  it("the 200s among them carry an ETag", async () => {
    api.clock.now = T0 + 60;
    const ok = [];
    for (const [merged] of PAIRS) {
      const res = await get(merged);
      if (res.status === 200 && !merged.includes("healthz")) ok.push(res.headers["etag"]);
    }
    expect(ok).toHaveLength(8);
    for (const etag of ok) expect(etag).toMatch(/^"[0-9a-f-]+"$/);
  });
});

describe("a keep-alive connection after a request with an Upgrade header", () => {
  // Without an 'upgrade' listener node answers such a request normally, but llhttp keeps the message's upgrade
  // flag, and node then swallows the parse error of the next message on the connection: no 400, the client
  // waits until the keep-alive timeout drops it. Either the server closes after the upgrade-flagged answer, or
  // the next malformed request gets its 400.
  it.each([
    {
      name: "malformed header name",
      next: "GET /v1/sales/active.json HTTP/1.1\r\nHost: a\r\nBad Header: x\r\n\r\n",
      status: 400,
    },
    {
      name: "target without a leading slash",
      next: "GET v1/sales/active.json HTTP/1.1\r\nHost: a\r\n\r\n",
      status: 400,
    },
    {
      name: "header block over 16 KB",
      next: `GET /v1/sales/active.json HTTP/1.1\r\nHost: a\r\nCookie: ${PAD(17_000)}\r\n\r\n`,
      status: 431,
    },
  ])("then a $name: $status, or the connection was closed", async ({ next, status }) => {
    api.clock.now = T0;
    const c = new KeepAliveConnection(api.server.port);
    try {
      const first = await c.send(
        buildRequest("GET", `/v1/sales/active.json?apikey=${api.key}`, [
          ["Host", "127.0.0.1"],
          ["Connection", "Upgrade"],
          ["Upgrade", "websocket"],
        ]),
        false,
      );
      expect(first.status).toBe(200);
      if (/close/i.test(first.headers["connection"] ?? "")) return; // closed after the answer: nothing can follow
      const second = await c.send(Buffer.from(next, "latin1"), false).catch((err: unknown) => err);
      expect(
        second instanceof NoResponseError ? "no answer: the connection was dropped" : (second as RawResponse).status,
      ).toBe(status);
    } finally {
      c.close();
    }
  });
});

describe("pipelining past the per-connection request limit", () => {
  // node's own maxRequestsPerSocket answers 503 to every request pipelined past the limit and keeps the
  // connection open: a 5xx any client can cause. After the answer that says `Connection: close` the server must
  // close and process nothing more (RFC 9112 section 9.6).
  it("no 5xx: the last answer says close, and the connection is closed", async () => {
    api.clock.now = T0;
    const limited = await startServer(api.handler, "127.0.0.1", 0, { maxRequestsPerSocket: 2 });
    try {
      const one = `GET /v1/sales/active.json?apikey=${api.key} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`;
      const { responses, closedByServer } = await rawExchange(limited.port, one.repeat(5), { idleMs: 3000 });
      expect(responses.map((r) => r.status).filter((s) => s >= 500)).toEqual([]);
      expect(responses.map((r) => r.status).slice(0, 2)).toEqual([200, 200]);
      expect(responses[1]!.headers["connection"]).toBe("close");
      expect(closedByServer).toBe(true);
    } finally {
      await limited.close();
    }
  });
});

describe("files of the data directory", () => {
  /** Every file under the data directory (manifest, routes, index, blobs, packs, whatever the layout is), relative to it. */
  async function dataFiles(): Promise<string[]> {
    const entries = await readdir(api.dataDir, { recursive: true, withFileTypes: true });
    return entries
      .filter((e) => e.isFile())
      .map((e) => relative(api.dataDir, join(e.parentPath, e.name)).split(sep).join("/"))
      .sort();
  }

  it("none is served, by any path that leads to it", async () => {
    api.clock.now = T0;
    const files = await dataFiles();
    expect(files.length).toBeGreaterThan(3);
    // The keys file lives beside the data dir in the fixture: ask for it the same ways.
    const relKeys = relative(api.dataDir, api.keysFile).split(sep).join("/");
    const served: string[] = [];
    let asked = 0;
    // Blobs can be thousands: every file of the snapshot directory, and a sample of the rest.
    const viaCurrent = files
      .filter((f) => f.startsWith("snapshots/"))
      .map((f) => `current/${f.split("/").slice(2).join("/")}`);
    const sample = files.filter((f, i) => !/^blobs\//.test(f) || i % 25 === 0).concat(viaCurrent, relKeys, "keys.json");
    for (const f of sample) {
      const enc = f
        .split("/")
        .map((seg) => (seg === ".." ? "%2e%2e" : encodeURIComponent(seg)))
        .join("/");
      for (const target of [
        `/${f}`,
        `//${f}`,
        `/v1/${f}`,
        `/v1//${f}`,
        `/v1/../${f}`,
        `/v1/%2e%2e/${enc}`,
        `/v1/sales/../../${f}`,
        `http://127.0.0.1/${f}`,
      ]) {
        const res = await send({ name: target, target: `${target}?${K}`, status: 404 });
        asked++;
        if (res.status !== 404) served.push(`${target} -> ${res.status}`);
        else expect((JSON.parse(res.body.toString("utf8")) as { code: string }).code).toBe("not_found");
      }
    }
    expect(served).toEqual([]);
    expect(asked).toBeGreaterThan(20);
  });
});

describe("the key never comes back", () => {
  it("appears in no header or body of any 4xx answer", async () => {
    api.clock.now = T0;
    let checked = 0;
    for (const c of CASES) {
      const res = await send(c);
      if (res.status < 400) continue;
      const text = res.raw.toString("latin1");
      expect(text.includes(api.key), `${c.name}: the key is in the response`).toBe(false);
      checked++;
    }
    expect(checked).toBeGreaterThan(100);
  });

  it("nor does a wrong 32-character candidate, wherever it was sent", async () => {
    api.clock.now = T0;
    const candidates = [
      "A".repeat(31) + "b",
      api.key.slice(1) + "x",
      api.key.toLowerCase() === api.key ? api.key.toUpperCase() : api.key.toLowerCase(),
    ];
    for (const cand of candidates) {
      for (const target of [
        `/v1/sales/active.json?apikey=${cand}`,
        `/v1/products?q=boot&apikey=${cand}`,
        `/v1/sales/active.json?apikey=${cand}&apikey=${cand}`,
        `/v1/sales/active.json&apikey=${cand}`,
        `/v1/products/1/detail.json?apikey=${cand}%00`,
      ]) {
        const res = await send({ name: target, target, status: 401 });
        expect(res.status, target).toBeGreaterThanOrEqual(400);
        expect(res.raw.toString("latin1").includes(cand), `${target}: the candidate is in the response`).toBe(false);
      }
    }
  });
});

describe("with the target cap raised, huge repeated filters are still refused", () => {
  let big: TestApi;
  beforeAll(async () => {
    big = await startTestApi(undefined, { maxUrlLength: 64 * 1024 });
  });
  afterAll(() => big.close());

  it.each([
    {
      name: "store=women x 1000",
      target: `/v1/products?q=boot&${"store=women&".repeat(1000)}`,
      status: 400,
      code: "invalid_request",
    },
    {
      name: "color=blue x 1000",
      target: `/v1/products?q=boot&${"color=blue&".repeat(1000)}`,
      status: 400,
      code: "invalid_request",
    },
    {
      name: "size=WoSh:8.5 x 60 (over 32 values, under 64 parameters)",
      target: `/v1/products?q=boot&${"size=WoSh%3A8.5&".repeat(60)}`,
      status: 400,
      code: "invalid_parameter",
    },
  ])("$name -> $status $code", async ({ target, status, code }) => {
    big.clock.now = T0;
    const res = await rawRequest(
      big.server.port,
      buildRequest("GET", `${target}apikey=${big.key}`, [
        ["Host", "127.0.0.1"],
        ["Connection", "close"],
      ]),
    );
    expect(res.status).toBe(status);
    expect((JSON.parse(res.body.toString("utf8")) as { code: string }).code).toBe(code);
  });
});
