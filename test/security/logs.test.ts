// Request logs: one entry per request with the path (never the query), status, bytes, time and key name; never a key.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateKey } from "../../src/keys/keys-file.ts";
import type { RequestLog } from "../../src/serve/handler.ts";
import { buildRequest, rawRequest } from "../../scripts/lib/raw-http.ts";
import { startTestApi, T0 } from "../helpers/fixture.ts";
import type { TestApi } from "../helpers/fixture.ts";

interface LoggedCase {
  what: string;
  method?: string;
  /** `{key}` = the valid key; `{c1}`..`{c3}` = wrong 32-character candidates. */
  target: string;
  headers?: Array<[string, string]>;
  /** The path the entry must show; undefined when the target could not be parsed (only: no query, no key). */
  path?: string;
  /** Whether the entry names the key ("test"). */
  named: boolean;
}

const CASES: LoggedCase[] = [
  { what: "valid list", target: "/v1/sales/active.json?apikey={key}", path: "/v1/sales/active.json", named: true },
  {
    what: "valid, gzip",
    target: "/v1/sales/active.json?apikey={key}",
    headers: [["Accept-Encoding", "gzip"]],
    path: "/v1/sales/active.json",
    named: true,
  },
  {
    what: "valid HEAD",
    method: "HEAD",
    target: "/v1/products/1/detail.json?apikey={key}",
    path: "/v1/products/1/detail.json",
    named: true,
  },
  {
    what: "valid, affid and callback",
    target: "/v1/products/1/detail.json?affid=partner_1&callback=cb&apikey={key}",
    path: "/v1/products/1/detail.json",
    named: true,
  },
  { what: "search", target: "/v1/products?q=boot&store=women&rows=5&apikey={key}", path: "/v1/products", named: true },
  {
    what: "search with a bad parameter",
    target: "/v1/products?q=boot&rows=1000&apikey={key}",
    path: "/v1/products",
    named: true,
  },
  {
    what: "404 with a valid key",
    target: "/v1/products/999/detail.json?apikey={key}",
    path: "/v1/products/999/detail.json",
    named: true,
  },
  {
    what: "404 outside /v1/",
    target: "/current/manifest.json?apikey={key}",
    path: "/current/manifest.json",
    named: false,
  },
  { what: "missing key", target: "/v1/sales/upcoming.json", path: "/v1/sales/upcoming.json", named: false },
  {
    what: "invalid key (well-formed)",
    target: "/v1/sales/active.json?apikey={c1}",
    path: "/v1/sales/active.json",
    named: false,
  },
  {
    what: "invalid key (one character off the real one)",
    target: "/v1/sales/active.json?apikey={c2}",
    path: "/v1/sales/active.json",
    named: false,
  },
  {
    what: "key given twice",
    target: "/v1/sales/active.json?apikey={key}&apikey={c3}",
    path: "/v1/sales/active.json",
    named: false,
  },
  { what: "key in the query of a 405", method: "DELETE", target: "/v1/sales/active.json?apikey={key}", named: false },
  {
    what: "%2e%2e traversal",
    target: "/v1/sales/%2e%2e/%2e%2e/keys.json?apikey={key}",
    path: "/v1/sales/../../keys.json",
    named: true,
  },
  { what: "invalid percent-encoding", target: "/v1/sales/%zz?apikey={key}", named: false },
  { what: "overlong target", target: `/v1/${"a".repeat(5000)}?apikey={key}`, named: false },
  {
    what: "absolute-form",
    target: "http://127.0.0.1/v1/sales/active.json?apikey={key}",
    path: "/v1/sales/active.json",
    named: true,
  },
  // A client that gets the separator wrong puts its key in the path: the log must still not show it.
  { what: "key after & instead of ?", target: "/v1/sales/active.json&apikey={key}", named: false },
  { what: "key after an encoded ?", target: "/v1/sales/active.json%3Fapikey={key}", named: false },
  { what: "candidate in a path segment", target: "/v1/products/{c1}/detail.json?apikey={key}", named: true },
  { what: "key as a store name", target: "/v1/sales/{key}/active.json", named: false },
];

let api: TestApi;
const entries: RequestLog[] = [];
let candidates: string[] = [];
beforeAll(async () => {
  api = await startTestApi(undefined, { log: (entry) => entries.push(entry) });
  const k = api.key;
  candidates = [generateKey(), k.slice(0, 31) + (k[31] === "A" ? "B" : "A"), generateKey()];
});
afterAll(() => api.close());

const fill = (s: string) =>
  s.replaceAll("{key}", api.key).replace(/\{c([123])\}/g, (_, i: string) => candidates[Number(i) - 1]!);

describe("request logs", () => {
  it("one entry per request: time, method, path without the query, status, bytes, ms, key name", async () => {
    api.clock.now = T0;
    const wrong: string[] = [];
    for (const c of CASES) {
      api.clock.now += 60; // keep any token bucket full: these are about logging, not limits
      const before = entries.length;
      const t0 = Date.now();
      const method = c.method ?? "GET";
      const res = await rawRequest(
        api.server.port,
        buildRequest(method, fill(c.target), [["Host", "127.0.0.1"], ["Connection", "close"], ...(c.headers ?? [])]),
        { isHead: method === "HEAD" },
      );
      const t1 = Date.now();
      if (entries.length !== before + 1) {
        wrong.push(`${c.what}: ${entries.length - before} entries`);
        continue;
      }
      const e = entries[entries.length - 1]!;
      const time = Date.parse(e.time);
      expect(e.time, c.what).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
      expect(time, c.what).toBeGreaterThanOrEqual(t0 - 1000); // wall-clock time, not the injected clock
      expect(time, c.what).toBeLessThanOrEqual(t1 + 1000);
      expect(e.method, c.what).toBe(method);
      if (c.path !== undefined) expect(e.path, c.what).toBe(c.path);
      expect(e.status, c.what).toBe(res.status);
      expect(e.bytes, c.what).toBe(method === "HEAD" ? 0 : res.body.length);
      expect(typeof e.ms, c.what).toBe("number");
      expect(e.ms, c.what).toBeGreaterThanOrEqual(0);
      expect(e.ms, c.what).toBeLessThan(1000);
      if (c.named) expect(e.key, c.what).toBe("test");
      else expect(e, c.what).not.toHaveProperty("key");
      expect(Object.keys(e).sort(), c.what).toEqual(
        ["bytes", "method", "ms", "path", "status", "time", ...(c.named ? ["key"] : [])].sort(),
      );
    }
    expect(wrong).toEqual([]);
    expect(entries).toHaveLength(CASES.length);
  });

  it("no serialised line contains the key or a 32-character candidate", () => {
    expect(entries.length).toBeGreaterThan(0);
    const leaks: string[] = [];
    for (const e of entries) {
      const line = JSON.stringify(e);
      for (const secret of [api.key, ...candidates])
        if (line.includes(secret)) leaks.push(`${secret === api.key ? "key" : "candidate"} in ${line.slice(0, 160)}`);
    }
    expect(leaks).toEqual([]);
  });
});
