// Correct to the second: states flip at `begins` and `ends` exactly, and max-age never reaches past the next change.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApi, T0, withKey } from "../helpers/fixture.ts";
import type { TestApi } from "../helpers/fixture.ts";

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api.close());

const D = 86400;
const at = async (t: number, path: string) => {
  api.clock.now = t;
  const res = await api.get(withKey(api, path));
  const maxAge = Number(/max-age=(\d+)/.exec(res.headers.get("cache-control") ?? "")?.[1] ?? NaN);
  return { status: res.status, body: res.status === 200 ? ((await res.json()) as any) : null, maxAge };
};

describe("a sale's begins (T0) and ends (T0 + 2 days)", () => {
  it("one second before begins: upcoming, no products, max-age 1", async () => {
    const detail = await at(T0 - 1, "/v1/sales/women/boots/detail.json");
    expect(detail.status).toBe(200);
    expect(detail.body).not.toHaveProperty("products");
    expect(detail.maxAge).toBe(1);
    const upcoming = await at(T0 - 1, "/v1/sales/women/upcoming.json");
    expect(upcoming.body.sales.map((s: any) => s.sale_key)).toContain("boots");
    expect(upcoming.maxAge).toBe(1);
    const active = await at(T0 - 1, "/v1/sales/women/active.json");
    expect(active.body.sales).toEqual([]);
    expect(active.maxAge).toBe(1);
    expect((await at(T0 - 1, "/v1/products/1/detail.json")).status).toBe(404);
  });

  it("at begins: active with products; its products are served", async () => {
    const detail = await at(T0, "/v1/sales/women/boots/detail.json");
    expect(detail.body.product_ids).toEqual([1, 2]);
    expect(detail.maxAge).toBe(300);
    expect((await at(T0, "/v1/sales/women/active.json")).body.sales.map((s: any) => s.sale_key)).toEqual(["boots"]);
    expect((await at(T0, "/v1/sales/women/upcoming.json")).body.sales.map((s: any) => s.sale_key)).not.toContain(
      "boots",
    );
    const product = await at(T0, "/v1/products/1/detail.json");
    expect(product.status).toBe(200);
  });

  it("one second before ends: still active, max-age 1", async () => {
    const detail = await at(T0 + 2 * D - 1, "/v1/sales/women/boots/detail.json");
    expect(detail.status).toBe(200);
    expect(detail.maxAge).toBe(1);
    const product = await at(T0 + 2 * D - 1, "/v1/products/1/detail.json");
    expect(product.status).toBe(200);
    expect(product.maxAge).toBe(1);
  });

  it("at ends: detail 404, products gone from every response", async () => {
    const t = T0 + 2 * D;
    expect((await at(t, "/v1/sales/women/boots/detail.json")).status).toBe(404);
    expect((await at(t, "/v1/products/1/detail.json")).status).toBe(404);
    expect((await at(t, "/v1/sales/active.json")).body.sales.map((s: any) => s.sale_key)).not.toContain("boots");
    expect((await at(t, "/v1/products/categories.json")).body.categories).not.toContain("Shoes");
    const search = await at(t, "/v1/products?q=ankle");
    expect(search.body.total_found).toBe(0);
  });

  it("max-age mid-way is the configured freshness, and shrinks towards a change", async () => {
    expect((await at(T0 + 60, "/v1/products/1/detail.json")).maxAge).toBe(300);
    expect((await at(T0 + 2 * D - 100, "/v1/products/1/detail.json")).maxAge).toBe(100);
    // the home sale begins at T0 + 2h: every list that changes then is capped
    expect((await at(T0 + 2 * 3600 - 42, "/v1/sales/active.json")).maxAge).toBe(42);
    expect((await at(T0 + 2 * 3600 - 42, "/v1/products/categories.json")).maxAge).toBe(300); // the home sale has no products
  });

  it("upcoming products are never served, in any endpoint", async () => {
    const t = T0 + D - 1; // dresses begins at T0 + 1 day
    expect((await at(t, "/v1/products/3/detail.json")).status).toBe(404);
    expect((await at(t, "/v1/products?q=silk")).body.total_found).toBe(0);
    expect((await at(t, "/v1/products/categories.json")).body.categories).not.toContain("Dresses");
    expect(JSON.stringify((await at(t, "/v1/products/sizes.json")).body)).not.toContain("WoAp");
    expect((await at(T0 + D, "/v1/products/3/detail.json")).status).toBe(200);
    expect((await at(T0 + D, "/v1/products?q=silk")).body.total_found).toBe(1);
  });
});
