// Sale lists with affid: once an insert length has been asked for twice, the gzip is assembled from a template
// compressed with context (about half the bytes of pieces compressed on their own), and it is the same body.
import { request } from "node:http";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sale, standardCatalog, startTestApi, withKey } from "../helpers/fixture.ts";
import type { TestApi } from "../helpers/fixture.ts";

const SALES = 40;
const BUDGET = 256 * 1024;
let api: TestApi;
beforeAll(async () => {
  const catalog = standardCatalog();
  for (let i = 0; i < SALES; i++)
    catalog.sales.push(
      sale(`many-${i}`, {
        name: `Winter sale number ${i}`,
        description: `Coats, boots and knitwear for the cold months, sale ${i}: up to ${i % 7}0% off while stocks last.`,
      }),
    );
  api = await startTestApi(catalog, { variantCacheBytes: BUDGET });
});
afterAll(() => api.close());

/** The raw bytes of a GET with `Accept-Encoding: gzip`, and their Content-Encoding. */
function getGzip(path: string): Promise<{ raw: Buffer; encoding: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request(api.url + path, { headers: { "Accept-Encoding": "gzip" } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ raw: Buffer.concat(chunks), encoding: res.headers["content-encoding"] }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** The plain list with `&affid=` after every sale_url, wrapped for JSONP when `callback` is given. */
function expected(plain: string, affid: string, callback = ""): string {
  const json = plain.replace(/("sale_url":"[^"]*)"/g, `$1&affid=${affid}"`);
  return callback ? `/**/${callback}(${json});` : json;
}

describe("gzip templates of sale lists", () => {
  it("after the second ask for an insert length, affid variants are half the bytes and decode to the same body", async () => {
    const path = "/v1/sales/active.json";
    const plain = await api.get(withKey(api, path)).then((r) => r.text());
    expect(plain.match(/"sale_url"/g)?.length).toBeGreaterThanOrEqual(SALES);

    const first = await getGzip(withKey(api, path, "affid=aa0001"));
    expect(first.encoding).toBe("gzip");
    expect(gunzipSync(first.raw).toString()).toBe(expected(plain, "aa0001"));
    const second = await getGzip(withKey(api, path, "affid=aa0002")); // same length: a template is made
    expect(gunzipSync(second.raw).toString()).toBe(expected(plain, "aa0002"));
    expect(second.raw.length).toBe(first.raw.length);
    await api.handler.idle();

    for (const affid of ["aa0003", "zz-9.Q"]) {
      const got = await getGzip(withKey(api, path, `affid=${affid}`));
      expect(got.encoding).toBe("gzip");
      expect(gunzipSync(got.raw).toString()).toBe(expected(plain, affid));
      expect(got.raw.length).toBeLessThan(first.raw.length * 0.7);
    }
    const jsonp = await getGzip(withKey(api, path, "affid=aa0004&callback=cb"));
    expect(gunzipSync(jsonp.raw).toString()).toBe(expected(plain, "aa0004", "cb"));
    expect(jsonp.raw.length).toBeLessThan(first.raw.length * 0.7);

    // Another length has no template yet: the pieces, the same body.
    const other = await getGzip(withKey(api, path, "affid=b1"));
    expect(gunzipSync(other.raw).toString()).toBe(expected(plain, "b1"));
    expect(other.raw.length).toBeGreaterThan(first.raw.length * 0.9);
    expect(api.handler.stats().variantBytes).toBeLessThanOrEqual(BUDGET);
  });

  it("many lengths asked twice each: at most one template is made at a time, and memory stays within the budget", async () => {
    const path = "/v1/sales/active.json";
    const plain = await api.get(withKey(api, path)).then((r) => r.text());
    for (let round = 0; round < 2; round++) {
      for (let length = 1; length <= 64; length++) {
        const affid = `${round}`.padEnd(length, "x");
        const got = await getGzip(withKey(api, path, `affid=${affid}`));
        expect(gunzipSync(got.raw).toString()).toBe(expected(plain, affid));
        expect(api.handler.stats().compressing).toBeLessThanOrEqual(1);
        expect(api.handler.stats().variantBytes).toBeLessThanOrEqual(BUDGET);
      }
      await api.handler.idle();
    }
  });
});
