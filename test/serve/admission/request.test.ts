// Request-target and query parsing as tables: each row an input and its exact result, or its exact error.
import { describe, expect, it } from "vitest";
import { ApiError } from "../../../src/errors.ts";
import {
  DEFAULT_MAX_URL_LENGTH,
  MAX_QUERY_PARAMS,
  parseCommon,
  parseQuery,
  parseTarget,
  single,
} from "../../../src/serve/admission/request.ts";

type Query = Record<string, string[]>;
/** An error as a row writes it: status, problem code and, where the row gives one, the detail. */
interface Refusal {
  status: number;
  code: string;
  detail?: string;
}

const queryOf = (map: Map<string, string[]>): Query => Object.fromEntries(map);
const mapOf = (query: Query) => new Map(Object.entries(query));

/** Runs `fn` and gives its result, or the ApiError it threw as `{ status, code, detail }`. */
function outcome<T>(fn: () => T): T | { error: Refusal } {
  try {
    return fn();
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return { error: { status: err.status, code: err.code, detail: err.detail } };
  }
}

/** Compares an outcome with a row: a refusal row without a detail checks only the status and code. */
function expectOutcome<T>(got: T | { error: Refusal }, want: T | Refusal) {
  if (typeof want === "object" && want !== null && "status" in want && "code" in want) {
    expect(got).toHaveProperty("error");
    const { error } = got as { error: Refusal };
    expect({ status: error.status, code: error.code }).toEqual({ status: want.status, code: want.code });
    if (want.detail !== undefined) expect(error.detail).toBe(want.detail);
  } else {
    expect(got).toEqual(want);
  }
}

const BAD_REQUEST = { status: 400, code: "invalid_request" } as const;
const NOT_FOUND = { status: 404, code: "not_found" } as const;
const TOO_LONG = { status: 414, code: "uri_too_long" } as const;
const BAD_PATH = { ...BAD_REQUEST, detail: "the path contains control characters or backslashes" };
const BAD_PATH_ESCAPE = { ...BAD_REQUEST, detail: "the path has invalid percent-encoding or is not UTF-8" };
const BAD_QUERY_ESCAPE = { ...BAD_REQUEST, detail: "the query string has invalid percent-encoding or is not UTF-8" };
const BAD_QUERY_CONTROL = { ...BAD_REQUEST, detail: "the query string contains control characters" };
const TOO_MANY = { ...BAD_REQUEST, detail: `more than ${MAX_QUERY_PARAMS} query parameters` };
const pairs = (n: number) => Array.from({ length: n }, (_, i) => `p${i}=${i}`).join("&");
const queryOfPairs = (n: number): Query =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, [String(i)]]));

describe("parseTarget", () => {
  it.each<[string, { path: string; query: Query } | Refusal]>([
    // -- origin-form --
    ["/v1/sales/active.json", { path: "/v1/sales/active.json", query: {} }],
    ["/v1/sales/active.json?apikey=k", { path: "/v1/sales/active.json", query: { apikey: ["k"] } }],
    ["/", { path: "/", query: {} }],
    ["/v1/sales/active.json?", { path: "/v1/sales/active.json", query: {} }],
    ["/v1/sales/active.json/", { path: "/v1/sales/active.json/", query: {} }],
    // -- runs of slashes are merged in the raw path, before decoding --
    ["/v1//sales/active.json", { path: "/v1/sales/active.json", query: {} }],
    ["//v1///products/1/detail.json", { path: "/v1/products/1/detail.json", query: {} }],
    ["/v1/sales//women/active.json", { path: "/v1/sales/women/active.json", query: {} }],
    [
      "/v1/sales/women//boots//detail.json?apikey=k",
      { path: "/v1/sales/women/boots/detail.json", query: { apikey: ["k"] } },
    ],
    ["//healthz", { path: "/healthz", query: {} }],
    ["///healthz", { path: "/healthz", query: {} }],
    ["//", { path: "/", query: {} }],
    ["/v1/sales/active.json//", { path: "/v1/sales/active.json/", query: {} }],
    [`/${"/".repeat(100)}v1/sales/active.json`, { path: "/v1/sales/active.json", query: {} }],
    ["//evil.example/v1/sales/active.json", { path: "/evil.example/v1/sales/active.json", query: {} }],
    ["/v1//products?q=a//b&x=//", { path: "/v1/products", query: { q: ["a//b"], x: ["//"] } }],
    ["/v1//products/%31/detail.json", { path: "/v1/products/1/detail.json", query: {} }],
    // dot segments are not normalised, merged or not
    ["/v1//../v1/sales/active.json", { path: "/v1/../v1/sales/active.json", query: {} }],
    ["/v1/./sales//active.json", { path: "/v1/./sales/active.json", query: {} }],
    ["/v1/%2e%2e//keys.json", { path: "/v1/../keys.json", query: {} }],
    // -- encoded slash and backslash: 404 before decoding, never merged --
    ["/v1/sales%2factive.json", NOT_FOUND],
    ["/v1%2Fsales%2Factive.json", NOT_FOUND],
    ["/v1/%2F%2Fsales/active.json", NOT_FOUND],
    ["/v1//%2f//sales/active.json", NOT_FOUND],
    ["/v1/sales%5cactive.json", NOT_FOUND],
    ["/v1/sales%5Cactive.json", NOT_FOUND],
    ["/v1/..%2f..%2fkeys.json", NOT_FOUND],
    ["/v1/a%00%2fb", NOT_FOUND],
    ["/v1/sales/active.json?x=%2F", { path: "/v1/sales/active.json", query: { x: ["/"] } }],
    // -- absolute-form: the scheme and authority are dropped --
    ["http://127.0.0.1/v1/sales/active.json?apikey=k", { path: "/v1/sales/active.json", query: { apikey: ["k"] } }],
    ["HTTPS://evil.example:99/v1/sales/active.json", { path: "/v1/sales/active.json", query: {} }],
    ["http://127.0.0.1//v1//sales/active.json", { path: "/v1/sales/active.json", query: {} }],
    ["http:///v1/sales/active.json", { path: "/v1/sales/active.json", query: {} }],
    ["http://127.0.0.1", { path: "/", query: {} }],
    ["http://127.0.0.1?apikey=k", { path: "", query: { apikey: ["k"] } }],
    ["http://127.0.0.1#x", { path: "", query: {} }],
    ["http://user@127.0.0.1/v1/a", { path: "/v1/a", query: {} }],
    ["ftp://127.0.0.1/v1/a", { ...BAD_REQUEST, detail: "the request target must be a path starting with /" }],
    ["file:///etc/passwd", BAD_REQUEST],
    ["*", BAD_REQUEST],
    ["v1/sales/active.json", BAD_REQUEST],
    ["", BAD_REQUEST],
    // -- fragments are cut before the query is found --
    ["/v1/a#frag", { path: "/v1/a", query: {} }],
    ["/v1/a?x=1#frag", { path: "/v1/a", query: { x: ["1"] } }],
    ["/v1/a?x=1#y&z=2", { path: "/v1/a", query: { x: ["1"] } }],
    ["/v1/a#?x=1", { path: "/v1/a", query: {} }],
    ["/v1//a#//b", { path: "/v1/a", query: {} }],
    ["#x", BAD_REQUEST],
    // -- percent-decoding of the path; `+` is a literal plus in a path --
    ["/v1/products/%31/detail.json", { path: "/v1/products/1/detail.json", query: {} }],
    ["/caf%C3%A9", { path: "/café", query: {} }],
    ["/caf%c3%a9", { path: "/café", query: {} }],
    ["/a%20b", { path: "/a b", query: {} }],
    ["/a+b", { path: "/a+b", query: {} }],
    ["/a+b%20c", { path: "/a+b c", query: {} }],
    ["/a%2Bb", { path: "/a+b", query: {} }],
    ["/a%3Fb?x=1", { path: "/a?b", query: { x: ["1"] } }],
    ["/a%23b", { path: "/a#b", query: {} }],
    ["/v1/sales/%2e%2e/active.json", { path: "/v1/sales/../active.json", query: {} }],
    // -- bad escapes --
    ["/v1/sales/%zzactive.json", BAD_PATH_ESCAPE],
    ["/v1/sales/active.json%", BAD_PATH_ESCAPE],
    ["/v1/sales/active.json%4", BAD_PATH_ESCAPE],
    ["/v1/sales/%e0%a4/active.json", BAD_PATH_ESCAPE],
    ["/v1/sales/..%c0%af..%c0%afkeys.json", BAD_PATH_ESCAPE],
    ["/v1/sales/%ed%a0%80/active.json", BAD_PATH_ESCAPE],
    ["/v1/products/%80/detail.json", BAD_PATH_ESCAPE],
    ["/v1/a?q=%zz", BAD_QUERY_ESCAPE],
    ["/v1/a?q=boot%ff", BAD_QUERY_ESCAPE],
    // -- control characters and backslashes in the path, raw or decoded --
    ["/v1/sales/active.json%00", BAD_PATH],
    ["/v1/sales/%01active.json", BAD_PATH],
    ["/v1/sales/active.json%1f", BAD_PATH],
    ["/v1/sales/active.json%7f", BAD_PATH],
    ["/v1/sales/active.json%0d%0aSet-Cookie:%20a=b", BAD_PATH],
    ["/v1//sales//active.json%00", BAD_PATH],
    ["/v1/sales/active\x00.json", BAD_PATH],
    ["/v1/sales/\x01active.json", BAD_PATH],
    ["/v1/sales/\tactive.json", BAD_PATH],
    ["/v1/sales/active.json\x7f", BAD_PATH],
    ["/v1/sales\\active.json", BAD_PATH],
    ["/v1//..\\..\\keys.json", BAD_PATH],
    ["/v1/a%0a?x=1", BAD_PATH],
    ["/v1/a?q=boot%00", BAD_QUERY_CONTROL],
    ["/v1/a?x%0a=1", BAD_QUERY_CONTROL],
  ])("%j -> %j", (target, want) => {
    const got = outcome(() => {
      const { path, query } = parseTarget(target);
      return { path, query: queryOf(query) };
    });
    expectOutcome(got, want);
  });

  const filler = (n: number) => `/${"a".repeat(n - 1)}`;
  it.each<[string, string, number | undefined, { path: string; query: Query } | Refusal]>([
    [
      "exactly the default cap",
      filler(DEFAULT_MAX_URL_LENGTH),
      undefined,
      { path: filler(DEFAULT_MAX_URL_LENGTH), query: {} },
    ],
    [
      "one byte over the default cap",
      filler(DEFAULT_MAX_URL_LENGTH + 1),
      undefined,
      { ...TOO_LONG, detail: `the request target is longer than ${DEFAULT_MAX_URL_LENGTH} bytes` },
    ],
    ["the cap counts the query", `/a?x=${"b".repeat(DEFAULT_MAX_URL_LENGTH)}`, undefined, TOO_LONG],
    ["the cap counts slashes before they are merged", `/${"/".repeat(DEFAULT_MAX_URL_LENGTH)}`, undefined, TOO_LONG],
    ["the cap counts the fragment", `/a#${"b".repeat(DEFAULT_MAX_URL_LENGTH)}`, undefined, TOO_LONG],
    ["a given cap: at it", "/abc", 4, { path: "/abc", query: {} }],
    ["a given cap: over it", "/abcd", 4, { ...TOO_LONG, detail: "the request target is longer than 4 bytes" }],
  ])("%s", (_name, target, max, want) => {
    const got = outcome(() => {
      const { path, query } = parseTarget(target, max);
      return { path, query: queryOf(query) };
    });
    expectOutcome(got, want);
  });

  it("leaves a path without a run of slashes as the very string it was given", () => {
    const target = "/v1/sales/women/active.json";
    expect(parseTarget(target).path).toBe(target);
  });
});

describe("parseQuery", () => {
  it.each<[string, Query | Refusal]>([
    ["", {}],
    ["apikey=k", { apikey: ["k"] }],
    ["apikey=k&affid=a", { apikey: ["k"], affid: ["a"] }],
    // repeated parameters keep every value, in order
    ["store=women&store=men", { store: ["women", "men"] }],
    ["a=1&b=2&a=3", { a: ["1", "3"], b: ["2"] }],
    ["a=1&a=1", { a: ["1", "1"] }],
    // empty pairs are no parameters; a name without `=` has the empty value
    ["&", {}],
    ["&&&", {}],
    ["&a=1&&b=2&", { a: ["1"], b: ["2"] }],
    ["a", { a: [""] }],
    ["a=", { a: [""] }],
    ["a&a=", { a: ["", ""] }],
    ["=", { "": [""] }],
    ["=1", { "": ["1"] }],
    ["a==1", { a: ["=1"] }],
    ["a=b=c", { a: ["b=c"] }],
    ["a=1;b=2", { a: ["1;b=2"] }],
    ["a=1?b=2", { a: ["1?b=2"] }],
    ["a=//", { a: ["//"] }],
    // percent-decoding and `+`, in names and values
    ["q=a+b", { q: ["a b"] }],
    ["q=a%20b", { q: ["a b"] }],
    ["q=a%2Bb", { q: ["a+b"] }],
    ["q=a%2bb", { q: ["a+b"] }],
    ["q=+", { q: [" "] }],
    ["a+b=1", { "a b": ["1"] }],
    ["%61pikey=k", { apikey: ["k"] }],
    ["size=WoSh%3A8.5", { size: ["WoSh:8.5"] }],
    ["q=caf%C3%A9", { q: ["café"] }],
    ["q=%E2%82%AC", { q: ["€"] }],
    ["q=%26&r=%3D", { q: ["&"], r: ["="] }],
    ["q=%2F%5C", { q: ["/\\"] }],
    ["x=%25", { x: ["%"] }],
    // a control character anywhere is a 400, raw or decoded
    ["q=boot%00", BAD_QUERY_CONTROL],
    ["q=%0a", BAD_QUERY_CONTROL],
    ["q=%7F", BAD_QUERY_CONTROL],
    ["x%0a=1", BAD_QUERY_CONTROL],
    ["q=a\x01b", BAD_QUERY_CONTROL],
    ["q=a\tb", BAD_QUERY_CONTROL],
    ["a\x00=1", BAD_QUERY_CONTROL],
    ["ok=1&q=\x7f", BAD_QUERY_CONTROL],
    // bad escapes
    ["q=%zz", BAD_QUERY_ESCAPE],
    ["q=%", BAD_QUERY_ESCAPE],
    ["q=%4", BAD_QUERY_ESCAPE],
    ["%zz=1", BAD_QUERY_ESCAPE],
    ["q=%e0%a4", BAD_QUERY_ESCAPE],
    ["q=%ff", BAD_QUERY_ESCAPE],
    ["q=%c0%af", BAD_QUERY_ESCAPE],
    ["q=%ed%a0%80", BAD_QUERY_ESCAPE],
    // at most MAX_QUERY_PARAMS parameters; empty pairs do not count
    [pairs(MAX_QUERY_PARAMS), queryOfPairs(MAX_QUERY_PARAMS)],
    [pairs(MAX_QUERY_PARAMS + 1), TOO_MANY],
    [`${"&".repeat(1000)}${pairs(MAX_QUERY_PARAMS)}`, queryOfPairs(MAX_QUERY_PARAMS)],
    ["a=1&".repeat(MAX_QUERY_PARAMS), { a: Array<string>(MAX_QUERY_PARAMS).fill("1") }],
    ["a=1&".repeat(MAX_QUERY_PARAMS + 1), TOO_MANY],
    ["a&".repeat(MAX_QUERY_PARAMS + 1), TOO_MANY],
  ])("%j -> %j", (input, want) => {
    expectOutcome(
      outcome(() => queryOf(parseQuery(input))),
      want,
    );
  });
});

describe("single", () => {
  it.each<[Query, string, string | undefined | Refusal]>([
    [{}, "rows", undefined],
    [{ start: ["1"] }, "rows", undefined],
    [{ rows: ["5"] }, "rows", "5"],
    [{ rows: [""] }, "rows", ""],
    [
      { rows: ["5", "6"] },
      "rows",
      { status: 400, code: "invalid_parameter", detail: "rows: must be given at most once" },
    ],
    [
      { rows: ["5", "5"] },
      "rows",
      { status: 400, code: "invalid_parameter", detail: "rows: must be given at most once" },
    ],
    [{ Rows: ["5", "6"] }, "rows", undefined],
  ])("%j, %s -> %j", (query, name, want) => {
    expectOutcome(
      outcome(() => single(mapOf(query), name)),
      want,
    );
  });
});

describe("parseCommon", () => {
  const BAD_AFFID = {
    status: 400,
    code: "invalid_parameter",
    detail: "affid: must be 1-64 characters of A-Z a-z 0-9 _ . -",
  };
  const BAD_CALLBACK = {
    status: 400,
    code: "invalid_parameter",
    detail: "callback: must be a JavaScript name: [A-Za-z_$][A-Za-z0-9_$.]{0,63}",
  };
  it.each<[Query, { affid: string; callback: string } | Refusal]>([
    [{}, { affid: "", callback: "" }],
    [
      { apikey: ["k"], q: ["boot"] },
      { affid: "", callback: "" },
    ],
    // affid
    [{ affid: ["partner_7.x-y"] }, { affid: "partner_7.x-y", callback: "" }],
    [{ affid: ["A"] }, { affid: "A", callback: "" }],
    [{ affid: ["a".repeat(64)] }, { affid: "a".repeat(64), callback: "" }],
    [{ affid: ["a".repeat(65)] }, BAD_AFFID],
    [{ affid: [""] }, BAD_AFFID],
    [{ affid: ["a b"] }, BAD_AFFID],
    [{ affid: ["a/b"] }, BAD_AFFID],
    [{ affid: ["a&b"] }, BAD_AFFID],
    [{ affid: ['a"b'] }, BAD_AFFID],
    [{ affid: ["é"] }, BAD_AFFID],
    [{ affid: ["a\n"] }, BAD_AFFID],
    [{ affid: ["a", "b"] }, { status: 400, code: "invalid_parameter", detail: "affid: must be given at most once" }],
    // callback
    [{ callback: ["app.cb_1"] }, { affid: "", callback: "app.cb_1" }],
    [{ callback: ["$"] }, { affid: "", callback: "$" }],
    [{ callback: ["_x$.y"] }, { affid: "", callback: "_x$.y" }],
    [{ callback: ["a".repeat(64)] }, { affid: "", callback: "a".repeat(64) }],
    [{ callback: ["a".repeat(65)] }, BAD_CALLBACK],
    [{ callback: [""] }, BAD_CALLBACK],
    [{ callback: ["1abc"] }, BAD_CALLBACK],
    [{ callback: [".a"] }, BAD_CALLBACK],
    [{ callback: ["a-b"] }, BAD_CALLBACK],
    [{ callback: ["alert(1)"] }, BAD_CALLBACK],
    [{ callback: ["<script>"] }, BAD_CALLBACK],
    [
      { callback: ["a", "b"] },
      { status: 400, code: "invalid_parameter", detail: "callback: must be given at most once" },
    ],
    // both; a bad affid is reported before a bad callback
    [
      { affid: ["A1"], callback: ["cb"] },
      { affid: "A1", callback: "cb" },
    ],
    [{ affid: ["a b"], callback: ["1"] }, BAD_AFFID],
    [{ affid: ["A1"], callback: ["1"] }, BAD_CALLBACK],
  ])("%j -> %j", (query, want) => {
    expectOutcome(
      outcome(() => parseCommon(mapOf(query))),
      want,
    );
  });
});
