// The OpenAPI document and the reference page, as the server sends them: no key, ETag and 304, CORS, compression.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderGuide } from "../../src/api/guide.ts";
import { BASE, startTestApi } from "../helpers/fixture.ts";
import type { TestApi } from "../helpers/fixture.ts";

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api.close());

describe.each([
  ["/v1/openapi.json", "application/json; charset=utf-8"],
  ["/docs", "text/html; charset=utf-8"],
])("%s", (path, type) => {
  it("answers without a key, cacheable, CORS open", async () => {
    const res = await api.get(path, { headers: { "accept-encoding": "identity" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe(type);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("cache-control")).toBe("public, max-age=300");
    expect(res.headers.get("etag")).toMatch(/^"[0-9a-f]{32}"$/);
    expect(res.headers.get("ratelimit-limit")).toBeNull();
    const again = await api.get(path, { headers: { "if-none-match": res.headers.get("etag")! } });
    expect(again.status).toBe(304);
  });

  it.each(["gzip", "br"])("is sent as %s to a client that accepts it", async (encoding) => {
    const identity = Buffer.from(
      await (await api.get(path, { headers: { "accept-encoding": "identity" } })).arrayBuffer(),
    );
    const res = await api.get(path, { headers: { "accept-encoding": encoding } });
    expect(res.headers.get("content-encoding")).toBe(encoding);
    expect(Number(res.headers.get("content-length"))).toBeLessThan(identity.length / 2);
    expect(Buffer.from(await res.arrayBuffer()).equals(identity)).toBe(true); // fetch decodes it
  });

  it("ignores a key, and refuses other methods", async () => {
    expect((await api.get(`${path}?apikey=nonsense`)).status).toBe(200);
    const post = await api.get(path, { method: "POST" });
    expect(post.status).toBe(405);
    expect(((await post.json()) as any).code).toBe("method_not_allowed");
  });
});

describe("the guide, for an API with a developer portal (PORTAL_URL)", () => {
  const guide = renderGuide(BASE, "300", "https://portal.example.test");
  it("sends partners to the portal for a key, linked, and never to the operator", () => {
    expect(guide).toContain("Get your key at the [developer portal](https://portal.example.test/)");
    expect(guide).toContain("[sign up](https://portal.example.test/sign-up)");
    expect(guide).not.toContain("npm run keys");
    expect(guide).not.toContain("operator (on the server");
  });
});

describe("the OpenAPI document", () => {
  it("lists every search parameter the server reads, and each one's bad value is the 400 the document promises", async () => {
    const doc = (await (await api.get("/v1/openapi.json")).json()) as any;
    const op = Object.values(doc.paths["/v1/products"]).find((o: any) => o.operationId) as any;
    const names = (op.parameters as any[]).map(
      (p) => (p.$ref ? doc.components.parameters[p.$ref.split("/").pop()] : p).name,
    );
    const search = ["q", "store", "brand", "color", "gender", "size", "typos", "prefix", "sort"];
    search.push("min_price", "max_price", "facets", "rows", "start");
    expect(names).toEqual(expect.arrayContaining(search));
    const key = `apikey=${api.key}&q=boot`;
    for (const [name, bad] of [
      ["store", "mars"],
      ["color", "plaid"],
      ["gender", "robot"],
      ["size", "??"],
      ["typos", "2"],
      ["prefix", "yes"],
      ["sort", "cheapest"],
      ["min_price", "-1"],
      ["max_price", "1.999"],
      ["facets", "brand,weight"],
      ["rows", "0"],
      ["start", "-1"],
    ]) {
      const res = await api.get(`/v1/products?${key}&${name}=${encodeURIComponent(bad!)}`);
      expect(res.status, name).toBe(400);
      const problem = (await res.json()) as { code: string; detail: string };
      expect(problem.code, name).toBe("invalid_parameter");
      expect(problem.detail, name).toContain(name);
    }
  });

  it("names this server, and has an operationId and a summary for every operation", async () => {
    const doc = (await (await api.get("/v1/openapi.json")).json()) as any;
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.servers).toEqual([{ url: BASE, description: "This server" }]);
    const operations = Object.values(doc.paths).flatMap((item: any) => Object.values(item)) as any[];
    expect(operations).toHaveLength(15);
    for (const op of operations) {
      expect(op.operationId).toMatch(/^[a-z][A-Za-z]+$/);
      expect(op.summary).toBeTruthy();
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(["200", "304", "400", "405", "414", "431"]));
    }
    expect(doc.info).toMatchObject({ title: "Flash-sale API", version: "v1" }); // Redoc heads it "Flash-sale API (v1)"
  });

  it("declares the three ways of sending the key, any one of which will do", async () => {
    const doc = (await (await api.get("/v1/openapi.json")).json()) as any;
    expect(doc.components.securitySchemes).toMatchObject({
      apiKeyHeader: { type: "apiKey", in: "header", name: "X-Api-Key" },
      bearer: { type: "http", scheme: "bearer" },
      apikey: { type: "apiKey", in: "query", name: "apikey" },
    });
    expect(doc.security).toEqual([{ apiKeyHeader: [] }, { bearer: [] }, { apikey: [] }]);
    const guide = doc.info.description as string;
    for (const way of ["X-Api-Key: YOUR_API_KEY", "Authorization: Bearer YOUR_API_KEY", "?apikey=YOUR_API_KEY"])
      expect(guide).toContain(way);
  });

  it("with no portal configured, the guide and the page's banner say that the API's operator issues keys", async () => {
    const doc = (await (await api.get("/v1/openapi.json")).json()) as any;
    expect(doc.info.description).toContain("Keys are issued by the API's operator");
    expect(doc.info.description).toContain("npm run keys -- create");
    expect(doc.info.description).not.toMatch(/developer portal\]/);
    expect(await (await api.get("/docs")).text()).toContain("<p>Keys are issued by the API's operator</p>");
  });

  it("the reference page is the document, self-contained", async () => {
    const html = await (await api.get("/docs")).text();
    expect(html).toContain('<meta http-equiv="Content-Security-Policy"');
    expect(html).toContain('"operationId":"searchProducts"');
    expect(html).not.toMatch(/<(script|link|img)[^>]+(src|href)="https?:/);
  });
});
