// Scratch buffers: bodies made for one response are given back once it is written and used again, never while a
// response still holds them, and the free ones kept stay within their bound.
import { request } from "node:http";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  allocScratch,
  isScratch,
  release,
  SCRATCH_MAX_BYTES,
  scratchBytes,
} from "../../../src/serve/bodies/scratch.ts";
import { sale, standardCatalog, startTestApi, withKey } from "../../helpers/fixture.ts";
import type { TestApi } from "../../helpers/fixture.ts";

describe("allocScratch", () => {
  it("gives a buffer of the size asked, and the same memory again once it is released (once)", () => {
    const a = allocScratch(40_000);
    expect(a.length).toBe(40_000);
    expect(isScratch(a)).toBe(true);
    release(a);
    release(a); // a second release is ignored: the memory is handed out once
    const b = allocScratch(33_000);
    expect(b.buffer).toBe(a.buffer);
    const c = allocScratch(33_000);
    expect(c.buffer).not.toBe(a.buffer);
    release(b);
    release(c);
  });

  it("leaves small and huge sizes to node, and keeps at most SCRATCH_MAX_BYTES free", () => {
    expect(isScratch(allocScratch(100))).toBe(false);
    expect(isScratch(allocScratch(8 * 1024 * 1024))).toBe(false);
    const many = Array.from({ length: 40 }, () => allocScratch(1024 * 1024));
    for (const b of many) release(b);
    expect(scratchBytes()).toBeLessThanOrEqual(SCRATCH_MAX_BYTES);
    expect(scratchBytes()).toBeGreaterThan(0);
  });
});

describe("responses made in scratch buffers", () => {
  let api: TestApi;
  beforeAll(async () => {
    const catalog = standardCatalog();
    for (let i = 0; i < 40; i++) catalog.sales.push(sale(`s-${i}`, { description: `Sale ${i}. `.repeat(40) }));
    api = await startTestApi(catalog);
  });
  afterAll(() => api.close());

  it("200 concurrent requests with new affids each get their own bytes", async () => {
    const plain = await api.get(withKey(api, "/v1/sales/active.json")).then((r) => r.text());
    const get = (affid: string) =>
      new Promise<string>((resolve, reject) => {
        const path = withKey(api, "/v1/sales/active.json", `affid=${affid}`);
        const req = request(api.url + path, { headers: { "Accept-Encoding": "gzip" } }, (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => resolve(gunzipSync(Buffer.concat(chunks)).toString()));
        });
        req.on("error", reject);
        req.end();
      });
    const affids = Array.from({ length: 200 }, (_, i) => `c${i}`);
    const bodies = await Promise.all(affids.map(get));
    bodies.forEach((body, i) => expect(body).toBe(plain.replace(/("sale_url":"[^"]*)"/g, `$1&affid=${affids[i]}"`)));
    expect(scratchBytes()).toBeGreaterThan(0); // given back once written
  });
});
