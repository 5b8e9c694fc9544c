// Bodies read from the packs through a cache bounded by bytes (src/snapshot/body-cache.ts): a cache too small to
// hold even one body answers every resource, in every encoding, with the bytes of one that holds them all; it stays
// within its bound; a pack removed once loaded is still read through its open file; a closed pack is never read.
import { readdir, unlink } from "node:fs/promises";
import { join } from "node:path";
import { request } from "node:http";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BodyCache } from "../../../src/snapshot/body-cache.ts";
import { closePacks } from "../../../src/snapshot/packs.ts";
import { loadSnapshot } from "../../../src/snapshot/load.ts";
import { catalogVersion, startTestApi, withKey } from "../../helpers/fixture.ts";
import type { TestApi } from "../../helpers/fixture.ts";

const CATALOG = catalogVersion(1, 40);
let roomy: TestApi;
let tiny: TestApi;
beforeAll(async () => {
  [roomy, tiny] = await Promise.all([
    startTestApi(CATALOG),
    startTestApi(CATALOG, { bodyCacheBytes: 1, variantCacheBytes: 0 }),
  ]);
}, 60_000);
afterAll(async () => {
  await Promise.all([roomy?.close(), tiny?.close()]);
});

interface Raw {
  status: number;
  etag: string | undefined;
  body: Buffer;
}

/** A GET with exact headers, the body decoded as its Content-Encoding says. */
function raw(base: string, path: string, headers: Record<string, string> = {}): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(base + path, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const sent = Buffer.concat(chunks);
        const encoding = res.headers["content-encoding"];
        resolve({
          status: res.statusCode!,
          // Which encoding a list goes out in depends on whether its brotli, made in the background, is ready yet:
          // the bodies are compared decoded, the ETags without their encoding's suffix.
          etag: res.headers.etag?.replace(/-(gz|br)"$/, '"'),
          body: encoding === "gzip" ? gunzipSync(sent) : encoding === "br" ? brotliDecompressSync(sent) : sent,
        });
      });
    });
    req.on("error", reject);
    req.end();
  });
}

/** Every kind of resource: each product, each sale's detail, the lists, categories, sizes, searches, an affid variant. */
function paths(api: TestApi): string[] {
  const out = [
    "/v1/sales/active.json",
    "/v1/sales/upcoming.json",
    "/v1/sales/women/active.json",
    "/v1/products/categories.json",
    "/v1/products/sizes.json",
    "/v1/products?q=boot",
    "/v1/products?q=filler&rows=100",
    "/v1/sales/active.json?affid=cache-test",
  ];
  for (const p of CATALOG.products) out.push(`/v1/products/${p.id}/detail.json`);
  for (const s of CATALOG.sales) out.push(`/v1/sales/${s.store}/${s.key}/detail.json`);
  return out.map((p) => withKey(api, p));
}

describe("resource bodies through a bounded cache", () => {
  it("a cache smaller than one body answers every resource in every encoding as one that holds them all", async () => {
    // The two servers have the same snapshot bytes but different keys: compare path by path with each one's key.
    const [roomyPaths, tinyPaths] = [paths(roomy), paths(tiny)];
    let compared = 0;
    for (let i = 0; i < roomyPaths.length; i++)
      for (const encoding of ["identity", "gzip", "br"]) {
        const headers = { "Accept-Encoding": encoding };
        const [want, got] = [
          await raw(roomy.url, roomyPaths[i]!, headers),
          await raw(tiny.url, tinyPaths[i]!, headers),
        ];
        expect({ path: tinyPaths[i], ...got }).toEqual({ path: tinyPaths[i], ...want });
        compared++;
      }
    expect(compared).toBeGreaterThan(150);
    const stats = tiny.handler.stats();
    expect(stats.bodies).toBeLessThanOrEqual(1);
    // Each product asked for three times was read from its pack each time: nothing is held past the bound.
    expect(stats.bodyReads).toBeGreaterThanOrEqual(3 * CATALOG.products.length);
    expect(roomy.handler.stats().bodyBytes).toBeGreaterThan(100_000);
  });

  it("stays within its bound after every body is asked for", async () => {
    const bound = 40 * 1024;
    const api = await startTestApi(CATALOG, { bodyCacheBytes: bound });
    try {
      for (const path of paths(api)) expect((await raw(api.url, path)).status).toBeLessThan(500);
      const { bodyBytes, bodies, bodyReads } = api.handler.stats();
      expect(bodies).toBeGreaterThan(1);
      expect(bodyBytes).toBeLessThanOrEqual(bound);
      expect(bodyReads).toBeGreaterThan(bodies);
      // A body asked for again right away is held: no read for it.
      const path = paths(api).find((p) => p.startsWith("/v1/products/1000/"))!;
      await raw(api.url, path);
      const reads = api.handler.stats().bodyReads;
      await raw(api.url, path);
      expect(api.handler.stats().bodyReads).toBe(reads);
    } finally {
      await api.close();
    }
  });

  it("a pack removed after the snapshot was loaded is still read through the file the server holds open", async () => {
    const api = await startTestApi(CATALOG, { bodyCacheBytes: 1 });
    try {
      const packsDir = join(api.dataDir, "packs");
      for (const f of await readdir(packsDir)) await unlink(join(packsDir, f));
      const path = "/v1/products/1001/detail.json";
      const [a, b] = [await raw(api.url, withKey(api, path)), await raw(roomy.url, withKey(roomy, path))];
      expect(a).toEqual(b);
      expect(a.status).toBe(200);
    } finally {
      await api.close();
    }
  });

  it("a body of a closed pack is refused with the pack's path, never read from another file", async () => {
    const snapshot = await loadSnapshot(roomy.dataDir, { bodies: new BodyCache(1) });
    const [ref] = snapshot.products.values();
    expect(snapshot.bodies.get(ref!).identity.length).toBe(ref!.size);
    closePacks(snapshot.packs.values());
    const other = [...snapshot.products.values()].find((r) => r !== ref)!;
    expect(() => snapshot.bodies.get(other)).toThrow(/\.pack: read after the pack was closed/);
  });
});
