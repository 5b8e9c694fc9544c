// The fuzzer's request generator: request i is a pure function of (seed, i), whatever order requests are sent in.
import { COLOR_GROUPS } from "../../src/catalog/schema.ts";
import { createRandom, deriveSeed } from "../../src/catalog/sample/random.ts";
import type { Random } from "../../src/catalog/sample/random.ts";
import { buildRequest } from "./raw-http.ts";

export type FuzzKind =
  "valid" | "new-variant" | "mutated-url" | "bad-key" | "method" | "headers" | "raw-bytes" | "framing";

export interface FuzzRequest {
  kind: FuzzKind;
  bytes: Buffer;
  method: string;
  isHead: boolean;
  /** The key is intact and in its place: sent from the main address, whose failed-authentication budget it never spends. */
  clean: boolean;
}

export interface FuzzMaterial {
  key: string;
  paths: readonly string[];
  words: readonly string[];
  brands: readonly string[];
  sizeKeys: readonly string[];
  /** ETags seen for some resources (any encoding), for If-None-Match. */
  etags: readonly string[];
  /**
   * The paths that get one of the fixed affids or callbacks (AFFIDS, CALLBACKS). Each (body, affid, callback) is a
   * cached variant, so a bounded set keeps that working set bounded: the run pre-warms it (see `variantWarmUp`).
   * `new-variant` requests (see `listPaths`) add variants without end, which only a bounded cache keeps level.
   */
  variantPaths: readonly string[];
  /**
   * Sale lists (all-store and per store): the largest bodies a variant is made of. `new-variant` requests ask for
   * them with an affid or callback no earlier request had, as thousands of affiliates do: each one is a variant
   * the server has not seen, which must not cost memory that outlives the variant cache's bound.
   */
  listPaths: readonly string[];
}

const AFFIDS = ["partner1", "p_2", "a.b-c", "X", "affiliate_0123456789", "z".repeat(64)];
const CALLBACKS = ["cb", "jQuery123_456", "$.x", "_"];

/** Every (variant path, affid, callback) the generator can produce, as targets without the key. */
export function variantWarmUp(m: FuzzMaterial): string[] {
  const out: string[] = [];
  for (const path of m.variantPaths) {
    for (const affid of ["", ...AFFIDS]) {
      for (const callback of ["", ...CALLBACKS]) {
        if (!affid && !callback) continue;
        out.push(`${path}?${affid ? `affid=${affid}&` : ""}${callback ? `callback=${callback}&` : ""}`);
      }
    }
  }
  return out;
}

const KINDS: Array<[FuzzKind, number]> = [
  ["valid", 30],
  ["new-variant", 24],
  ["mutated-url", 26],
  ["bad-key", 8],
  ["method", 6],
  ["headers", 16],
  ["raw-bytes", 10],
  ["framing", 4],
];
const STORES = ["women", "men", "kids", "home", "children"];
const COLORS: readonly string[] = COLOR_GROUPS;
const GENDERS = ["boy", "girl", "unisex"];
const ENCODINGS = [
  "gzip",
  "br",
  "br, gzip",
  "gzip;q=0, br;q=0",
  "*",
  "*;q=0",
  "identity",
  "deflate",
  "br;q=0.5, gzip;q=1",
  "x-gzip",
  "GZIP",
  "br;q=abc",
  ", , ,",
  "gzip;q=1.0000001",
  "br;q=-1",
];
const METHODS = [
  "POST",
  "PUT",
  "DELETE",
  "PATCH",
  "OPTIONS",
  "TRACE",
  "PROPFIND",
  "PROPPATCH",
  "MKCOL",
  "COPY",
  "MOVE",
  "LOCK",
  "UNLOCK",
  "SEARCH",
  "PURGE",
  "REPORT",
  "MKACTIVITY",
  "CHECKOUT",
  "MERGE",
  "M-SEARCH",
  "NOTIFY",
  "SUBSCRIBE",
  "LINK",
  "SOURCE",
  "FOO",
  "get",
  "GETT",
  "G\x00ET",
];
const SEGMENTS = [
  "..",
  ".",
  "%2e%2e",
  "%2E%2e",
  "",
  "%2f",
  "%5c",
  "%00",
  "%zz",
  "%e0%a4",
  "%c0%af",
  "%ff",
  "~",
  "..;",
  "%252e%252e",
  "active.json",
  "detail.json",
  "-1",
  "0",
  "99999999999999999999",
  "1e3",
  "current",
  "blobs",
  "snapshots",
  "keys.json",
  "manifest.json",
  "search.idx",
  "routes.json",
  "%20",
  "+",
  "%u002e",
];
/** Values no affid or callback accepts (so they never make a new cached variant). */
const BAD_AFFIDS = ["", "a b", "%00", "%3Cscript%3E", "x".repeat(65), "a%26b", "%C3%A9", "alert(1)", "1-"];
const HOSTILE_VALUES = [
  "",
  "-1",
  "0",
  "1e3",
  "2147483648",
  "99999999999999999999",
  "%00",
  "%zz",
  "%e0%a4",
  "%ff",
  "%0d%0a",
  "a%26apikey%3dx",
  "<script>",
  "%3Cscript%3E",
  "1.5",
  "0x10",
  "+1",
  "NaN",
  "Infinity",
  "%F0%9F%91%A0",
  "%C3%A9t%C3%A9",
  "%2e%2e%2f",
];
const BAD_BYTES = [
  "\x00",
  "\x01",
  "\x08",
  "\x0b",
  "\x0c",
  "\x1b",
  "\x7f",
  "\x80",
  "\xc3",
  "\xe9",
  "\xff",
  " ",
  "\t",
  "\\",
  '"',
  "<",
  ">",
  "{",
  "}",
  "|",
  "^",
  "`",
  "#",
  "%",
];

function weighted<T>(rng: Random, table: ReadonlyArray<[T, number]>): T {
  const total = table.reduce((n, [, w]) => n + w, 0);
  let r = rng.next() * total;
  for (const [v, w] of table) if ((r -= w) < 0) return v;
  return table[table.length - 1]![0];
}

const enc = (s: string) => encodeURIComponent(s);

/** A valid request target: a resource path or a search, the key, and sometimes affid/callback. */
function validUrl(rng: Random, m: FuzzMaterial): { path: string; params: Array<[string, string]> } {
  const params: Array<[string, string]> = [];
  let path: string;
  const r = rng.next();
  if (r < 0.25) {
    path = "/v1/products";
    const q = Array.from({ length: rng.int(1, 3) }, () => rng.pick(m.words)).join(" ");
    params.push(["q", enc(q)]);
    if (rng.chance(0.3)) for (let i = rng.int(1, 2); i > 0; i--) params.push(["store", rng.pick(STORES)]);
    if (rng.chance(0.2)) params.push(["brand", enc(rng.pick(m.brands).split(" ")[0]!)]);
    if (rng.chance(0.2)) params.push(["color", rng.pick(COLORS)]);
    if (rng.chance(0.1)) params.push(["gender", rng.pick(GENDERS)]);
    if (rng.chance(0.15) && m.sizeKeys.length) params.push(["size", enc(rng.pick(m.sizeKeys))]);
    if (rng.chance(0.3)) params.push(["rows", String(rng.int(1, 100))]);
    if (rng.chance(0.2)) params.push(["start", String(rng.chance(0.9) ? rng.int(0, 50) : rng.int(0, 2147483647))]);
  } else if (r < 0.27) {
    path = "/healthz";
  } else if (r < 0.4) {
    path = rng.pick(m.variantPaths);
    if (rng.chance(0.7)) params.push(["affid", rng.pick(AFFIDS)]);
    if (rng.chance(0.4)) params.push(["callback", rng.pick(CALLBACKS)]);
  } else {
    path = rng.pick(m.paths);
  }
  params.splice(rng.int(0, params.length), 0, ["apikey", m.key]);
  if (rng.chance(0.05)) params.push([rng.pick(["utm_source", "x", "_", "v"]), String(rng.int(0, 1e6))]);
  return { path, params };
}

const ALL_STORE_LIST = /^\/v1\/sales\/(active|upcoming)\.json$/;

/**
 * A valid target with an affid and/or callback made from `i`, so new to the server (request i is asked for once):
 * mostly a sale list (most of them all-store, the largest bodies), sometimes a search or any resource.
 */
function newVariantUrl(rng: Random, m: FuzzMaterial, i: number): { path: string; params: Array<[string, string]> } {
  const r = rng.next();
  const params: Array<[string, string]> = [["apikey", m.key]];
  let path: string;
  if (r < 0.6) path = rng.pick(m.listPaths.filter((p) => ALL_STORE_LIST.test(p)));
  else if (r < 0.9) path = rng.pick(m.listPaths.filter((p) => !ALL_STORE_LIST.test(p)));
  else if (r < 0.95) {
    path = "/v1/products";
    params.push(["q", enc(rng.pick(m.words))]);
  } else path = rng.pick(m.paths);
  const name = i.toString(36);
  const which = rng.next();
  if (which < 0.8) params.push(["affid", rng.chance(0.5) ? `aff-${name}` : `partner.${name}_x`]);
  if (which >= 0.65) params.push(["callback", rng.chance(0.5) ? `cb_${name}` : `jQuery${name}.done`]);
  return { path, params };
}

const serialize = (u: { path: string; params: Array<[string, string]> }) =>
  u.params.length ? `${u.path}?${u.params.map(([n, v]) => `${n}=${v}`).join("&")}` : u.path;

function mutatePath(rng: Random, path: string): string {
  const segs = path.split("/");
  const i = rng.int(1, Math.max(1, segs.length - 1));
  switch (rng.int(0, 9)) {
    case 0:
      return segs.map((s, j) => (j === i ? rng.pick(SEGMENTS) : s)).join("/");
    case 1:
      segs.splice(i, 0, rng.pick(SEGMENTS));
      return segs.join("/");
    case 2:
      segs.splice(i, 0, segs[i] ?? "");
      return segs.join("/");
    case 3:
      segs.splice(i, 1);
      return segs.join("/") || "/";
    case 4: {
      const at = rng.int(0, path.length);
      return (
        path.slice(0, at) +
        rng.pick([
          "%",
          "%2",
          "%41",
          "%2F",
          "%3F",
          "%23",
          "%00",
          "%25",
          "/",
          "//",
          ";",
          ".",
          "~",
          "!",
          "$",
          "'",
          "(",
          "*",
          "@",
          ":",
        ]) +
        path.slice(at)
      );
    }
    case 5: {
      const at = rng.int(0, path.length - 1);
      return path.slice(0, at) + path.slice(at + 1);
    }
    case 6:
      return rng.chance(0.5)
        ? path.toUpperCase()
        : path.replace(/[a-z]/g, (c) => (rng.chance(0.3) ? c.toUpperCase() : c));
    case 7:
      return path.replace(/[a-z.]/g, (c) => (rng.chance(0.3) ? `%${c.charCodeAt(0).toString(16)}` : c));
    case 8:
      return path + "/" + "a".repeat(rng.chance(0.5) ? rng.int(100, 1000) : rng.int(3900, 4200));
    default:
      return rng.pick(["", "/", "/v1", "/v2", "/V1", "/v1.0", "/api/v1"]) + path.replace(/^\/v1/, "");
  }
}

function mutateQuery(rng: Random, params: Array<[string, string]>): void {
  const names = ["q", "store", "brand", "color", "gender", "size", "rows", "start", "Q", "q[]", "", "%71"];
  switch (rng.int(0, 7)) {
    case 0:
      params.push([rng.pick(names), rng.pick(HOSTILE_VALUES)]);
      break;
    case 7:
      params.push([rng.pick(["affid", "callback"]), rng.pick(BAD_AFFIDS)]);
      break;
    case 1: {
      const name = rng.pick(["store", "color", "size", "gender", "brand", "rows"]);
      const n = rng.pick([2, 31, 32, 33, 63, 64, 65, 200]);
      for (let i = 0; i < n; i++) params.push([name, name === "store" ? "women" : name === "color" ? "red" : "x"]);
      break;
    }
    case 2: {
      const others = params.filter(([n]) => n !== "apikey" && n !== "affid" && n !== "callback");
      if (others.length) {
        const p = rng.pick(others);
        p[1] = rng.pick(HOSTILE_VALUES);
      }
      break;
    }
    case 3:
      params.push(["pad", "x".repeat(rng.chance(0.5) ? rng.int(100, 2000) : rng.int(3800, 5000))]);
      break;
    case 4:
      params.push(["q", enc("x".repeat(rng.int(200, 300)))]);
      break;
    case 5:
      for (let i = rng.int(1, 8); i > 0; i--) params.push(["", ""]);
      break;
    default:
      params.push([rng.pick(names), enc(String.fromCharCode(rng.int(0x20, 0x2fff)).repeat(rng.int(1, 20)))]);
  }
}

function mutateKey(rng: Random, params: Array<[string, string]>, key: string): void {
  const i = params.findIndex(([n]) => n === "apikey");
  switch (rng.int(0, 7)) {
    case 0:
      params.splice(i, 1);
      break;
    case 1:
      params.push(["apikey", key]);
      break;
    case 2:
      params[i] = ["apikey", key.slice(0, 31) + (key[31] === "A" ? "B" : "A")];
      break;
    case 3:
      params[i] = ["apikey", key.slice(0, rng.int(0, 31))];
      break;
    case 4:
      params[i] = ["apikey", Array.from({ length: 32 }, () => rng.pick([..."ABCDEFabcdef0123456789"])).join("")];
      break;
    case 5:
      params[i] = ["apikey", key + "x"];
      break;
    case 6:
      params[i] = ["APIKEY", key];
      break;
    default:
      params[i] = ["apikey", rng.pick(HOSTILE_VALUES)];
  }
}

function randomHeaders(rng: Random, m: FuzzMaterial): Array<[string, string]> {
  const h: Array<[string, string]> = [];
  for (let n = rng.int(1, 4); n > 0; n--) {
    switch (rng.int(0, 13)) {
      case 0:
        h.push(["Accept-Encoding", rng.pick(ENCODINGS)]);
        break;
      case 1:
        h.push(["Accept-Encoding", Array.from({ length: rng.int(10, 300) }, () => rng.pick(ENCODINGS)).join(", ")]);
        break;
      case 2:
        h.push(["If-None-Match", m.etags.length ? rng.pick(m.etags) : '"x"']);
        break;
      case 3:
        h.push([
          "If-None-Match",
          Array.from({ length: rng.int(2, 400) }, () =>
            m.etags.length && rng.chance(0.1) ? rng.pick(m.etags) : `W/"${rng.int(0, 1e9)}"`,
          ).join(", "),
        ]);
        break;
      case 4:
        h.push(["If-None-Match", rng.pick(["*", "", '"', "W/", 'W/""', ",,,", '"a" "b"'])]);
        break;
      case 5:
        h.push(["Cookie", "a=" + "b".repeat(rng.chance(0.85) ? rng.int(10, 4000) : rng.int(16_000, 20_000))]);
        break;
      case 6:
        for (let i = rng.int(10, 120); i > 0; i--) h.push([`X-F${i}`, "v".repeat(rng.int(0, 200))]);
        break;
      case 7:
        h.push([
          "X-Forwarded-For",
          Array.from(
            { length: rng.int(1, 30) },
            () => `10.${rng.int(0, 255)}.${rng.int(0, 255)}.${rng.int(0, 255)}`,
          ).join(", "),
        ]);
        break;
      case 8:
        h.push(["Range", rng.pick(["bytes=0-10", "bytes=-1", "bytes=99999999999-", "bytes=0-0,1-1,2-2", "lines=1-2"])]);
        break;
      case 9:
        h.push(
          ["Connection", rng.pick(["close", "keep-alive", "Upgrade", "TE, close"])],
          ["Upgrade", rng.pick(["websocket", "h2c", "HTTP/2.0"])],
        );
        break;
      case 10:
        h.push(["Expect", rng.pick(["100-continue", "200-ok"])]);
        break;
      case 11:
        h.push(["Host", rng.pick(["evil.example", "", "127.0.0.1:1", "a".repeat(300)])]);
        break;
      case 12:
        h.push([rng.pick(["X-\xe9", "X-Val"]), rng.pick(["\xe9t\xe9", "\x80\xff", "a\tb", "  spaced  "])]);
        break;
      default:
        h.push(
          ["Authorization", `Bearer ${m.key}`],
          ["Accept", rng.pick(["*/*", "application/json", "text/html", "application/javascript"])],
        );
    }
  }
  return h;
}

/** Inserts or replaces bytes (never CR or LF, so the message stays framed) in the target or a header value. */
function corruptBytes(rng: Random, head: string): string {
  const lineEnd = head.indexOf("\r\n");
  for (let n = rng.int(1, 3); n > 0; n--) {
    const inTarget = rng.chance(0.75);
    const lo = inTarget ? head.indexOf(" ") + 1 : lineEnd + 2;
    const hi = inTarget ? head.lastIndexOf(" HTTP/1.1", lineEnd) : head.length - 4;
    if (hi <= lo) continue;
    const at = rng.int(lo, hi - 1);
    const b = rng.pick(BAD_BYTES);
    head = rng.chance(0.5) ? head.slice(0, at) + b + head.slice(at) : head.slice(0, at) + b + head.slice(at + 1);
  }
  return head;
}

const FRAMING = [
  "GET /v1/sales/active.json\r\n\r\n",
  "GET /v1/sales/active.json HTTP/1.1\nHost: a\n\n",
  "GET /v1/sales/active.json HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n",
  "GET /v1/sales/active.json HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
  "GET /v1/sales/active.json HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n",
  "GET /v1/sales/active.json HTTP/1.1\r\nHost: a\r\n Folded: x\r\n\r\n",
  "GET /v1/sales/active.json HTTP/1.1\r\nHost: a\r\nBad Header: x\r\n\r\n",
  "GET /v1/sales/active.json HTTP/9.9\r\nHost: a\r\n\r\n",
  "GET /v1/sales/active.json HTTP/1.1 extra\r\nHost: a\r\n\r\n",
  "GET  /v1/sales/active.json  HTTP/1.1\r\nHost: a\r\n\r\n",
  "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
  "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n",
  "GET /v1/sales/active.json HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n\r\n",
  "GET /v1/sales/active.json HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n",
  "CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: a\r\n\r\n",
];

/** Request number `i` of the run seeded `seed`. */
export function fuzzRequest(seed: number, i: number, m: FuzzMaterial): FuzzRequest {
  const rng = createRandom(deriveSeed(seed, i));
  const kind = weighted(rng, KINDS);
  let url = validUrl(rng, m);
  let method = rng.chance(0.15) ? "HEAD" : "GET";
  let clean = true;
  let headers: Array<[string, string]> = [["Host", "127.0.0.1"]];
  let body: Buffer | undefined;
  switch (kind) {
    case "valid":
      if (rng.chance(0.4)) headers.push(["Accept-Encoding", rng.pick(["gzip, deflate, br", "gzip", "br"])]);
      if (rng.chance(0.1) && m.etags.length) headers.push(["If-None-Match", rng.pick(m.etags)]);
      break;
    case "new-variant":
      url = newVariantUrl(rng, m, i);
      if (rng.chance(0.7)) headers.push(["Accept-Encoding", rng.pick(["br, gzip", "gzip"])]);
      break;
    case "mutated-url":
      for (let n = rng.int(1, 3); n > 0; n--) {
        if (rng.chance(0.5)) url.path = mutatePath(rng, url.path);
        else mutateQuery(rng, url.params);
      }
      break;
    case "bad-key":
      mutateKey(rng, url.params, m.key);
      clean = false;
      break;
    case "method":
      method = rng.pick(METHODS);
      if (rng.chance(0.5)) {
        body = Buffer.alloc(rng.int(0, 8192), rng.pick(["{", "x", "\x00"]));
        headers.push(["Content-Length", String(body.length)]);
      }
      clean = false;
      break;
    case "headers":
      headers = [...headers, ...randomHeaders(rng, m)];
      if (headers.filter(([n]) => n === "Host").length > 1 && rng.chance(0.5))
        headers = headers.filter(([n], j) => n !== "Host" || j > 0);
      break;
    default:
      clean = false;
  }
  if (rng.chance(0.03)) headers.push(["Connection", "close"]);
  let target = serialize(url);
  if (kind === "mutated-url" && rng.chance(0.05)) target = `http://127.0.0.1${target}`;
  if (kind === "framing") {
    const raw = rng.pick(FRAMING);
    return {
      kind,
      bytes: Buffer.from(raw, "latin1"),
      method: raw.slice(0, raw.indexOf(" ")),
      isHead: false,
      clean: false,
    };
  }
  let bytes = buildRequest(method, target, headers, body);
  if (kind === "raw-bytes") {
    const head = bytes.toString("latin1");
    bytes = Buffer.from(corruptBytes(rng, head), "latin1");
  }
  return { kind, bytes, method, isHead: method === "HEAD", clean };
}
