// affid and JSONP variants: the same bytes in every encoding (gzip assembled from the snapshot's pieces, never
// compressed per request), a bounded cache, and no background work for a variant asked for once.
// (Lists with many links and their gzip templates: context-gzip.test.ts.)
import { request } from "node:http";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { standardCatalog, startTestApi, withKey } from "../../helpers/fixture.ts";
import type { TestApi } from "../../helpers/fixture.ts";

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi(undefined, { variantCacheBytes: 64 * 1024 });
});
afterAll(() => api.close());

interface Got {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A GET with exact headers; the body decoded as its Content-Encoding says. */
function get(path: string, headers: Record<string, string> = {}): Promise<Got> {
  return new Promise((resolve, reject) => {
    const req = request(api.url + path, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const raw = Buffer.concat(chunks);
        const enc = res.headers["content-encoding"];
        const body = enc === "gzip" ? gunzipSync(raw) : enc === "br" ? brotliDecompressSync(raw) : raw;
        resolve({ status: res.statusCode!, headers: res.headers, body });
      });
    });
    req.on("error", reject);
    req.end();
  });
}

/** The oracle: the plain body with `&affid=` at the end of every page link, wrapped for JSONP. */
function expected(plain: Buffer, affid: string, callback: string): string {
  const addAffid = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(addAffid);
    if (v && typeof v === "object") {
      return Object.fromEntries(
        Object.entries(v).map(([k, x]) => [
          k,
          (k === "url" || k === "sale_url") && typeof x === "string" && x.includes("utm_") && affid
            ? `${x}&affid=${affid}`
            : addAffid(x),
        ]),
      );
    }
    return v;
  };
  const json = JSON.stringify(addAffid(JSON.parse(plain.toString("utf8"))));
  return callback ? `/**/${callback}(${json});` : json;
}

const PATHS = [
  "/v1/sales/active.json",
  "/v1/sales/women/active.json",
  "/v1/sales/upcoming.json",
  "/v1/sales/women/boots/detail.json",
  "/v1/products/1/detail.json",
  "/v1/products?q=boot",
  "/v1/products/categories.json",
];
const PARAMS: [string, string][] = [
  ["A1", ""],
  ["", "cb"],
  ["partner_7.x-y", "app.cb_1"],
];
const ENCODINGS = ["identity", "gzip", "br, gzip"];

describe("variants", () => {
  it.each(PATHS)(
    "%s: every variant in every encoding is the plain body with affid spliced in, wrapped for JSONP",
    async (path) => {
      const plain = await get(withKey(api, path));
      expect(plain.status).toBe(200);
      for (const [affid, callback] of PARAMS) {
        const params = [affid && `affid=${affid}`, callback && `callback=${callback}`].filter(Boolean).join("&");
        const want = expected(plain.body, affid, callback);
        const etags = new Set<string>();
        // Three rounds: seen once (made and forgotten), then cached, then served from the cache.
        for (let round = 0; round < 3; round++) {
          for (const enc of ENCODINGS) {
            const got = await get(withKey(api, path, params), enc === "identity" ? {} : { "Accept-Encoding": enc });
            expect(got.status).toBe(200);
            expect(got.body.toString("utf8")).toBe(want);
            expect(got.headers["content-type"]).toBe(
              callback ? "application/javascript; charset=utf-8" : "application/json; charset=utf-8",
            );
            if (enc !== "identity" && got.body.length >= 256)
              expect(got.headers["content-encoding"]).toMatch(/^(gzip|br)$/);
            etags.add(String(got.headers.etag).replace(/-(gz|br)"$/, '"'));
          }
        }
        expect(etags.size).toBe(1);
        expect([...etags][0]).not.toBe(String(plain.headers.etag));
      }
    },
  );

  it("a new affid on every request starts no brotli and caches no variant; the cache stays within its bytes", async () => {
    const before = api.handler.stats();
    for (let i = 0; i < 200; i++) {
      const got = await get(withKey(api, "/v1/sales/active.json", `affid=new${i}`), { "Accept-Encoding": "br, gzip" });
      expect(got.headers["content-encoding"]).toBe("gzip");
      // The fixture's lists have too few links for a gzip template (context-gzip.ts): nothing runs in the background.
      expect(api.handler.stats().compressing).toBe(0);
    }
    expect(api.handler.stats().variants).toBe(before.variants);
    // Asked for twice, each is cached: the cache evicts to stay within 64 KB.
    for (let i = 0; i < 400; i++) {
      await get(withKey(api, "/v1/sales/active.json", `affid=twice${i % 200}`), { "Accept-Encoding": "gzip" });
      await get(withKey(api, "/v1/products/1/detail.json", `affid=twice${i % 200}`));
      expect(api.handler.stats().variantBytes).toBeLessThanOrEqual(64 * 1024);
    }
    expect(api.handler.stats().variants).toBeGreaterThan(0);
  });

  it("a body with no page links but a gzip variant (a long categories list) is wrapped for JSONP and sent gzipped", async () => {
    const catalog = standardCatalog();
    catalog.products = catalog.products.map((p, i) => ({
      ...p,
      categories: Array.from({ length: 20 }, (_, c) => `Category number ${i * 20 + c}`),
    }));
    const big = await startTestApi(catalog);
    try {
      const path = withKey(big, "/v1/products/categories.json");
      const plain = await fetch(big.url + path).then((r) => r.text());
      expect(plain.length).toBeGreaterThan(256);
      for (const params of ["callback=cb", "affid=A1", "affid=A1&callback=cb"]) {
        const got = await new Promise<Got>((resolve, reject) => {
          const req = request(
            big.url + withKey(big, "/v1/products/categories.json", params),
            { headers: { "Accept-Encoding": "gzip" } },
            (res) => {
              const chunks: Buffer[] = [];
              res.on("data", (c: Buffer) => chunks.push(c));
              res.on("end", () =>
                resolve({ status: res.statusCode!, headers: res.headers, body: gunzipSync(Buffer.concat(chunks)) }),
              );
            },
          );
          req.on("error", reject);
          req.end();
        });
        expect(got.headers["content-encoding"]).toBe("gzip");
        expect(got.body.toString()).toBe(params.includes("callback") ? `/**/cb(${plain});` : plain);
      }
    } finally {
      await big.close();
    }
  });

  it("If-None-Match with a variant's ETag is a 304", async () => {
    const path = withKey(api, "/v1/products/1/detail.json", "affid=etag1");
    const first = await get(path, { "Accept-Encoding": "gzip" });
    const second = await get(path, { "If-None-Match": String(first.headers.etag) });
    expect(second.status).toBe(304);
  });
});
