// The wire format of every endpoint, field by field, through a real server over a real snapshot; all of it three
// times: with the key in the query, in an X-Api-Key header and in Authorization: Bearer (issue 35).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BASE, D, SITE, startTestApi, T0, withKey } from "../helpers/fixture.ts";
import type { TestApi } from "../helpers/fixture.ts";

/** Where a test's `apikey` parameter goes: left in the query, or moved into either header. */
type KeyWay = "query" | "X-Api-Key" | "Authorization";

/** `api` whose requests carry their first `apikey` parameter in `way` instead (in the query as sent, for "query"). */
function keyIn(way: KeyWay, api: TestApi): TestApi {
  if (way === "query") return api;
  return {
    ...api,
    get: (path, init) => {
      const key = /[?&]apikey=([^&]*)/.exec(path)?.[1];
      if (key === undefined) return api.get(path, init);
      const rest = path.replace(/([?&])apikey=[^&]*(&?)/, (_, sep: string, amp: string) => (amp ? sep : ""));
      const headers = new Headers(init?.headers);
      headers.set(way, way === "Authorization" ? `Bearer ${key}` : key);
      return api.get(rest, { ...init, headers });
    },
  };
}

for (const way of ["query", "X-Api-Key", "Authorization"] as const)
  describe(`the key in ${way === "query" ? "the query" : way}`, () => {
    let api: TestApi;
    beforeAll(async () => {
      api = keyIn(way, await startTestApi());
    });
    afterAll(() => api.close());

    const json = async (path: string, params = "") => {
      const res = await api.get(withKey(api, path, params));
      return { res, body: (await res.json()) as any };
    };
    const UTM = "utm_medium=api&utm_source=salesapi&utm_campaign=";

    describe("sale lists", () => {
      it("lists active sales of all stores, newest first, every field as the contract has it", async () => {
        api.clock.now = T0;
        const { res, body } = await json("/v1/sales/active.json");
        expect(res.status).toBe(200);
        expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
        expect(res.headers.get("access-control-allow-origin")).toBe("*");
        expect(body.sales.map((s: any) => s.sale_key)).toEqual(["boots", "coats"]);
        expect(body.sales[0]).toEqual({
          name: "Sale boots",
          sale: `${BASE}/v1/sales/women/boots/detail.json`,
          sale_key: "boots",
          store: "women",
          sale_url: `${SITE}/sale/women/boots?${UTM}sale`,
          description: "Great things.",
          begins: "2026-11-22T17:00:00Z",
          ends: "2026-11-24T17:00:00Z",
          image_urls: {
            "600x300": [{ url: "https://cdn.example-retailer.com/sale-boots.jpg", width: 600, height: 300 }],
          },
          products: [`${BASE}/v1/products/1/detail.json`, `${BASE}/v1/products/2/detail.json`],
          product_ids: [1, 2],
        });
        // open-ended: no `ends` key at all
        expect(Object.keys(body.sales[1])).not.toContain("ends");
      });

      it("lists upcoming sales soonest first, without products", async () => {
        api.clock.now = T0;
        const { body } = await json("/v1/sales/upcoming.json");
        expect(body.sales.map((s: any) => s.sale_key)).toEqual(["soon", "dresses"]);
        for (const s of body.sales) {
          expect(s).not.toHaveProperty("products");
          expect(s).not.toHaveProperty("product_ids");
        }
      });

      it("narrows to one store, and 404s an unknown store", async () => {
        api.clock.now = T0;
        expect((await json("/v1/sales/women/active.json")).body.sales.map((s: any) => s.sale_key)).toEqual(["boots"]);
        expect((await json("/v1/sales/kids/active.json")).body).toEqual({ sales: [] });
        expect((await json("/v1/sales/home/upcoming.json")).body.sales.map((s: any) => s.sale_key)).toEqual(["soon"]);
        const { res, body } = await json("/v1/sales/shoes/active.json");
        expect(res.status).toBe(404);
        expect(body.code).toBe("not_found");
        expect(body.detail).toContain("unknown store");
      });

      it("an active sale with no products has neither products nor product_ids", async () => {
        api.clock.now = T0 + 2 * 3600;
        const { body } = await json("/v1/sales/home/active.json");
        expect(body.sales).toHaveLength(1);
        expect(body.sales[0]).not.toHaveProperty("products");
        expect(body.sales[0]).not.toHaveProperty("product_ids");
      });
    });

    describe("sale detail, product detail, categories, sizes", () => {
      it("sale detail has the list's shape", async () => {
        api.clock.now = T0;
        const list = (await json("/v1/sales/active.json")).body.sales[0];
        const { res, body } = await json("/v1/sales/women/boots/detail.json");
        expect(res.status).toBe(200);
        expect(body).toEqual(list);
      });

      it("404s a sale that does not exist in that store", async () => {
        const { res, body } = await json("/v1/sales/men/boots/detail.json");
        expect(res.status).toBe(404);
        expect(body).toMatchObject({ status: 404, code: "not_found", title: "Not found" });
      });

      it("product detail, every field", async () => {
        api.clock.now = T0;
        const { res, body } = await json("/v1/products/1/detail.json");
        expect(res.status).toBe(200);
        expect(body).toEqual({
          id: 1,
          name: "Leather Ankle Boot 1",
          product: `${BASE}/v1/products/1/detail.json`,
          url: `${SITE}/product/1-boot?${UTM}product`,
          brand: "Acme Shoes",
          content: { description: "A sturdy leather boot. Goes with everything.", material: "Leather" },
          image_urls: {
            "300x400": [{ url: "https://cdn.example-retailer.com/1-300x400.jpg", width: 300, height: 400 }],
            "91x121": [{ url: "https://cdn.example-retailer.com/1-91x121.jpg", width: 91, height: 121 }],
          },
          skus: [
            {
              id: 11,
              inventory_status: "for sale",
              msrp_price: "120.00",
              sale_price: "59.00",
              attributes: [
                { name: "color", value: "Navy" },
                { name: "size", value: "8.5" },
              ],
            },
            {
              id: 12,
              inventory_status: "sold out",
              msrp_price: "120.00",
              sale_price: "59.00",
              shipping_surcharge: "5.00",
              attributes: [
                { name: "color", value: "Navy" },
                { name: "size", value: "9" },
              ],
            },
          ],
          categories: ["Boots", "Shoes"],
        });
      });

      it("404s a product that is unknown, upcoming, or whose sale has ended", async () => {
        api.clock.now = T0;
        for (const id of [999, 3, 5, 6]) {
          const { res, body } = await json(`/v1/products/${id}/detail.json`);
          expect(res.status, `product ${id}`).toBe(404);
          expect(body.code).toBe("not_found");
        }
      });

      it("a 404 known to hold until an instant is cached like a 200 (capped max-age); an unknown path's is no-store", async () => {
        const cases: [number, string, string, string][] = [
          // [clock, path, detail, Cache-Control]
          [T0, "/v1/products/999/detail.json", "no such product", "no-store"],
          [T0 + D - 100, "/v1/products/3/detail.json", "this product is not on sale now", "public, max-age=100"],
          [T0, "/v1/products/3/detail.json", "this product is not on sale now", "public, max-age=300"],
          [T0 + 10, "/v1/sales/kids/rainy/detail.json", "this sale has ended", "public, max-age=300"],
        ];
        for (const [now, path, detail, cacheControl] of cases) {
          api.clock.now = now;
          const { res, body } = await json(path);
          expect([path, res.status, body.detail, res.headers.get("cache-control")]).toEqual([
            path,
            404,
            detail,
            cacheControl,
          ]);
        }
        // As JSONP, the same.
        api.clock.now = T0 + D - 100;
        const res = await api.get(withKey(api, "/v1/products/3/detail.json", "callback=cb"));
        expect([res.status, res.headers.get("cache-control")]).toEqual([404, "public, max-age=100"]);
      });

      it("categories and sizes cover exactly the products on sale now", async () => {
        api.clock.now = T0;
        expect((await json("/v1/products/categories.json")).body).toEqual({ categories: ["Boots", "Coats", "Shoes"] });
        const sizes = await api.get(withKey(api, "/v1/products/sizes.json"));
        // raw text: label order matters and must not be reordered by a JS object
        expect(await sizes.text()).toBe(
          '{"Men\'s Apparel":{"M":"MeAp:M"},"Women\'s Shoes":{"8.5":"WoSh:8.5","9":"WoSh:9"}}',
        );
        api.clock.now = T0 - 1;
        expect((await json("/v1/products/categories.json")).body).toEqual({ categories: ["Coats", "Kids Shoes"] });
        expect((await json("/v1/products/sizes.json")).body).toEqual({
          "Kids' Shoes": { "13": "KiSh:13" },
          "Men's Apparel": { M: "MeAp:M" },
        });
      });
    });

    describe("affiliate links", () => {
      it("adds affid to page links only", async () => {
        api.clock.now = T0;
        const { body } = await json("/v1/sales/active.json", "affid=partner_7.x-y");
        expect(body.sales[0].sale_url).toBe(`${SITE}/sale/women/boots?${UTM}sale&affid=partner_7.x-y`);
        expect(body.sales[0].sale).toBe(`${BASE}/v1/sales/women/boots/detail.json`);
        expect(body.sales[0].products[0]).toBe(`${BASE}/v1/products/1/detail.json`);
        expect(body.sales[1].sale_url).toBe(`${SITE}/sale/men/coats?${UTM}sale&affid=partner_7.x-y`);
        const product = (await json("/v1/products/2/detail.json", "affid=A1")).body;
        expect(product.url).toBe(`${SITE}/product/2-boot?${UTM}product&affid=A1`);
        expect(product.product).toBe(`${BASE}/v1/products/2/detail.json`);
        expect(product.image_urls["300x400"][0].url).toBe("https://cdn.example-retailer.com/2-300x400.jpg");
      });

      it("gives affid responses their own ETag", async () => {
        const plain = await api.get(withKey(api, "/v1/products/1/detail.json"));
        const aff = await api.get(withKey(api, "/v1/products/1/detail.json", "affid=A1"));
        expect(plain.headers.get("etag")).not.toBe(aff.headers.get("etag"));
      });

      it.each(["", "a b", "x".repeat(65), "é", "a/b", "a&b"])(
        "rejects affid %j with a 400 naming it",
        async (affid) => {
          const { res, body } = await json("/v1/products/1/detail.json", `affid=${encodeURIComponent(affid)}`);
          expect(res.status).toBe(400);
          expect(res.headers.get("content-type")).toBe("application/problem+json");
          expect(body.code).toBe("invalid_parameter");
          expect(body.detail).toContain("affid");
        },
      );
    });

    describe("errors", () => {
      it("401 when the key is missing, with a body that says so", async () => {
        const res = await api.get("/v1/sales/active.json");
        expect(res.status).toBe(401);
        expect(res.headers.get("content-type")).toBe("application/problem+json");
        expect((await res.json()) as any).toEqual({
          type: "urn:flash-sale-api:problem:api_key_missing",
          title: "API key missing",
          status: 401,
          detail:
            "this request needs an API key: the apikey query parameter, an X-Api-Key header or Authorization: Bearer <key>",
          code: "api_key_missing",
        });
      });

      it.each([
        ["malformed", "short"],
        ["unknown", "A".repeat(32)],
        ["non-alphanumeric", "A".repeat(31) + "-"],
      ])("401 for a %s key, never echoing it", async (_what, key) => {
        const res = await api.get(`/v1/sales/active.json?apikey=${key}`);
        expect(res.status).toBe(401);
        const text = await res.text();
        expect(JSON.parse(text).code).toBe("api_key_invalid");
        expect(text).not.toContain(key);
      });

      it("404 problem for paths outside /v1/ and other versions", async () => {
        for (const path of ["/", "/v2/sales/active.json", "/v1/nope.json", "/v1/sales/active.json/extra"]) {
          const res = await api.get(withKey(api, path));
          expect(res.status, path).toBe(404);
          expect(((await res.json()) as any).code).toBe("not_found");
        }
      });

      it("405 with Allow for other methods", async () => {
        for (const method of ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"]) {
          const res = await api.get(withKey(api, "/v1/sales/active.json"), { method });
          expect(res.status, method).toBe(405);
          expect(res.headers.get("allow")).toBe("GET, HEAD");
          expect(((await res.json()) as any).code).toBe("method_not_allowed");
        }
      });
    });

    describe("runs of slashes (contract section 8)", () => {
      it.each([
        "/v1/sales/active.json",
        "/v1/sales/women/active.json",
        "/v1/sales/upcoming.json",
        "/v1/sales/home/upcoming.json",
        "/v1/sales/women/boots/detail.json",
        "/v1/products/1/detail.json",
        "/v1/products/categories.json",
        "/v1/products/sizes.json",
        "/v1/products?q=boot",
      ])("%s with // after /v1 answers 200 with the same ETag and body", async (path) => {
        api.clock.now = T0;
        const single = await api.get(withKey(api, path));
        const merged = await api.get(withKey(api, path.replace("/v1/", "/v1//")));
        expect(single.status).toBe(200);
        expect(merged.status).toBe(200);
        expect(merged.headers.get("etag")).toBeTruthy();
        expect(merged.headers.get("etag")).toBe(single.headers.get("etag"));
        expect(await merged.text()).toBe(await single.text());
      });

      it("merges every run, anywhere in the path, /healthz too", async () => {
        api.clock.now = T0;
        const single = await api.get(withKey(api, "/v1/sales/women/boots/detail.json"));
        const merged = await api.get(withKey(api, "//v1///sales//women////boots//detail.json"));
        expect(merged.status).toBe(200);
        expect(merged.headers.get("etag")).toBe(single.headers.get("etag"));
        for (const path of ["//healthz", "///healthz"]) {
          const res = await api.get(path);
          expect(res.status, path).toBe(200);
          expect(((await res.json()) as any).status).toBe("ok");
        }
      });

      // Dot segments are sent byte for byte by test/security/hostile-input.test.ts: fetch would resolve them first.
      it("does not merge encoded slashes", async () => {
        api.clock.now = T0;
        for (const path of ["/v1/%2F%2Fsales/active.json", "/v1//sales%2factive.json", "/v1/%2f/sales/active.json"]) {
          const res = await api.get(withKey(api, path));
          expect(res.status, path).toBe(404);
          expect(((await res.json()) as any).code).toBe("not_found");
        }
      });
    });

    describe("HTTP caching and encodings", () => {
      it("ETag and If-None-Match give 304 with no body", async () => {
        api.clock.now = T0;
        const first = await api.get(withKey(api, "/v1/products/1/detail.json"));
        const etag = first.headers.get("etag")!;
        expect(etag).toMatch(/^"[0-9a-f]{32}(-gz|-br)?"$/);
        const again = await api.get(withKey(api, "/v1/products/1/detail.json"), { headers: { "If-None-Match": etag } });
        expect(again.status).toBe(304);
        expect(again.headers.get("etag")).toBe(etag);
        expect(await again.text()).toBe("");
        const other = await api.get(withKey(api, "/v1/products/1/detail.json"), {
          headers: { "If-None-Match": '"nope"' },
        });
        expect(other.status).toBe(200);
      });

      it("HEAD has the GET's headers and no body", async () => {
        const get = await api.get(withKey(api, "/v1/sales/active.json"), {
          headers: { "Accept-Encoding": "identity" },
        });
        const head = await api.get(withKey(api, "/v1/sales/active.json"), {
          method: "HEAD",
          headers: { "Accept-Encoding": "identity" },
        });
        expect(head.status).toBe(200);
        expect(head.headers.get("content-length")).toBe(String((await get.arrayBuffer()).byteLength));
        expect(head.headers.get("etag")).toBe(get.headers.get("etag"));
        expect(await head.text()).toBe("");
      });

      it.each(["br", "gzip"])("sends %s when asked, with Vary", async (enc) => {
        const res = await api.get(withKey(api, "/v1/products/1/detail.json"), { headers: { "Accept-Encoding": enc } });
        expect(res.headers.get("content-encoding")).toBe(enc);
        // Accept-Encoding first; then the headers a key may come in (a response to a key is kept apart by them).
        expect(res.headers.get("vary")).toBe("Accept-Encoding, Authorization, X-Api-Key");
        expect(((await res.json()) as any).id).toBe(1); // fetch decodes it
      });

      it("identity when the client accepts no compression", async () => {
        const res = await api.get(withKey(api, "/v1/products/1/detail.json"), {
          headers: { "Accept-Encoding": "br;q=0, gzip;q=0" },
        });
        expect(res.headers.get("content-encoding")).toBeNull();
      });

      it("JSONP wraps the body and changes the type", async () => {
        const res = await api.get(withKey(api, "/v1/products/1/detail.json", "callback=app.cb_1"));
        expect(res.status).toBe(200);
        expect(res.headers.get("content-type")).toBe("application/javascript; charset=utf-8");
        expect(res.headers.get("x-content-type-options")).toBe("nosniff");
        const text = await res.text();
        expect(text.startsWith("/**/app.cb_1(")).toBe(true);
        expect(text.endsWith(");")).toBe(true);
        expect(JSON.parse(text.slice("/**/app.cb_1(".length, -2)).id).toBe(1);
      });

      it.each(["1abc", "a-b", "alert(1)", "x".repeat(65)])("rejects callback %j", async (cb) => {
        const res = await api.get(withKey(api, "/v1/products/1/detail.json", `callback=${encodeURIComponent(cb)}`));
        expect(res.status).toBe(400);
        expect(((await res.json()) as any).detail).toContain("callback");
      });
    });
  });
