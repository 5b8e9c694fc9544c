// deploy/varnish/default.vcl in front of a real server, through a real varnishd (Debian's `varnish`, installed by
// npm test's first step): sale transitions show through the cache within a second of their instant, a refused key
// never gets a copy, If-None-Match revalidates, a polling client is served from the cache, and the 404 of a sale
// that has ended is cached too. The server runs on the real clock (Varnish's TTLs do), on a catalog whose sale
// begins 4 s after the build and ends 3 s later; the polling loops below are the clients the test is about.
// test/deploy/edge-varnish.test.ts has the key checks at length.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireProgram } from "../../scripts/lib/test-programs.ts";
import { createKey, revokeKey } from "../../src/keys/keys-file.ts";
import { iso, product, sale, standardCatalog, startTestApi } from "../helpers/fixture.ts";
import type { TestApi } from "../helpers/fixture.ts";
import { startVarnish } from "../helpers/varnish.ts";
import type { Varnish } from "../helpers/varnish.ts";

// Installed by npm test's first step; if one is missing, the file fails naming it.
const VARNISHADM = requireProgram("varnishadm");
const VCL = fileURLToPath(new URL("../../deploy/varnish/default.vcl", import.meta.url));
const FLASH = "flash";
const FLASH_PRODUCT = 77;

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

let api: TestApi;
let varnish: Varnish;
let cacheUrl: string;
/** The flash sale's instants, epoch seconds. */
let begins: number;
let ends: number;

beforeAll(async () => {
  const now = Math.ceil(Date.now() / 1000);
  begins = now + 4;
  ends = begins + 3;
  const catalog = standardCatalog();
  catalog.products.push(product(FLASH_PRODUCT, { name: "Flash Boot" }));
  catalog.sales.push(
    sale(FLASH, { begins: iso(begins), ends: iso(ends), product_ids: [FLASH_PRODUCT], name: "Flash sale" }),
  );
  // The real clock: Varnish counts its TTLs on it. Varnish checks keys with the server's GET /edge/key, which it
  // answers to its proxies only.
  api = await startTestApi(catalog, { clock: Date.now, trustProxy: ["127.0.0.1"] });
  varnish = await startVarnish(VCL, Number(new URL(api.url).port));
  cacheUrl = varnish.url;
}, 60_000);

afterAll(async () => {
  await varnish?.stop();
  await api?.close();
});

/** A GET through the cache: status, X-Cache, a few headers, and the body. */
async function viaCache(path: string, headers: Record<string, string> = {}) {
  const res = await fetch(cacheUrl + path, { headers });
  const body = await res.text();
  return {
    status: res.status,
    hit: res.headers.get("x-cache") === "HIT",
    etag: res.headers.get("etag"),
    cacheControl: res.headers.get("cache-control"),
    body,
  };
}

const list = (key: string) => `/v1/sales/active.json?apikey=${key}`;

describe("Varnish with deploy/varnish/default.vcl", () => {
  it("a polling client is served from the cache; parameter order does not matter; If-None-Match gives a 304", async () => {
    let hits = 0;
    const polls = 60;
    for (let i = 0; i < polls; i++) {
      const r = await viaCache(`/v1/sales/women/active.json?apikey=${api.key}`);
      expect(r.status).toBe(200);
      if (r.hit) hits++;
    }
    expect(hits / polls).toBeGreaterThanOrEqual(0.9);
    const sorted = await viaCache(`/v1/products?apikey=${api.key}&q=boot&rows=5`);
    const shuffled = await viaCache(`/v1/products?rows=5&q=boot&apikey=${api.key}`);
    expect([sorted.status, shuffled.status, shuffled.hit, shuffled.body]).toEqual([200, 200, true, sorted.body]);

    const first = await viaCache(list(api.key));
    const revalidated = await fetch(cacheUrl + list(api.key), { headers: { "If-None-Match": first.etag! } });
    expect(revalidated.status).toBe(304);
    // Encodings are kept apart: br and identity bodies are not served for one another.
    const br = await fetch(cacheUrl + list(api.key), { headers: { "Accept-Encoding": "br, gzip" } });
    expect(br.headers.get("content-encoding")).toBe("br");
    const plain = await fetch(cacheUrl + list(api.key), { headers: { "Accept-Encoding": "identity" } });
    expect(plain.headers.get("content-encoding")).toBeNull();
    expect(await plain.text()).toBe(first.body);
  });

  it("a missing, invalid or revoked key is never answered from a copy fetched with a valid key; its 401 leaves as no-store", async () => {
    await viaCache(list(api.key)); // a valid copy in the cache
    const revoked = await createKey(api.keysFile, "revoked-partner", new Date(), { rate: 1e9, burst: 1e9 });
    await revokeKey(api.keysFile, "revoked-partner");
    await api.handler.reload();
    for (const path of [
      "/v1/sales/active.json",
      "/v1/sales/active.json?apikey=",
      list("A".repeat(32)),
      list(revoked),
      `/v1/sales/active.json?affid=x&apikey=${"B".repeat(32)}`,
    ]) {
      // The key check's answer is kept for EDGE_KEY_TTL: the second refusal comes from it.
      for (const hit of [false, true]) {
        const r = await viaCache(path);
        expect([path, r.status, r.hit, r.cacheControl]).toEqual([path, 401, hit, "no-store"]);
      }
    }
  });

  it("a key revoked is served until its check's answer expires (EDGE_KEY_TTL), or until the operator bans it", async () => {
    const key = await createKey(api.keysFile, "soon-revoked", new Date(), { rate: 1e9, burst: 1e9 });
    await api.handler.reload();
    const path = `/v1/sales/men/active.json?apikey=${key}`;
    expect((await viaCache(path)).status).toBe(200);
    await revokeKey(api.keysFile, "soon-revoked");
    await api.handler.reload();
    const cached = await viaCache(path);
    expect([cached.status, cached.hit]).toEqual([200, true]); // the window docs/deploy.md documents (EDGE_KEY_TTL)
    const ban = spawnSync(VARNISHADM, ["-n", varnish.instance, "ban", `req.url ~ "[?&]apikey=${key}(&|$)"`], {
      encoding: "utf8",
    });
    expect(ban.status, ban.stdout + ban.stderr).toBe(0);
    const after = await viaCache(path);
    expect([after.status, after.hit]).toEqual([401, false]);
  });

  it("the flash sale appears and disappears within 1 s of its instants; its 404 afterwards is served from the cache", async () => {
    // t: when the requests were sent; done: when both answers were in (on a loaded machine, a request sent just
    // before an instant may be answered after it, rightly with the new state).
    const seen: { t: number; done: number; inList: boolean; detail: number; detailHit: boolean }[] = [];
    const detail = `/v1/sales/women/${FLASH}/detail.json?apikey=${api.key}`;
    while (Date.now() / 1000 < ends + 2.5) {
      const t = Date.now() / 1000;
      const [l, d] = await Promise.all([viaCache(list(api.key)), viaCache(detail)]);
      expect(l.status).toBe(200);
      const done = Date.now() / 1000;
      seen.push({ t, done, inList: l.body.includes('"sale_key":"flash"'), detail: d.status, detailHit: d.hit });
      await pause(100);
    }
    const firstIn = seen.find((s) => s.inList);
    const lastIn = seen.findLast((s) => s.inList);
    expect(firstIn, "the sale never showed").toBeDefined();
    // A request sent after the instant plus 1 s sees the change; none answered before the instant does.
    expect(seen.filter((s) => s.t >= begins + 1 && s.done < ends).every((s) => s.inList)).toBe(true);
    expect(seen.filter((s) => s.done < begins - 0.05).some((s) => s.inList)).toBe(false);
    expect(seen.filter((s) => s.t >= ends + 1).some((s) => s.inList)).toBe(false);
    expect(lastIn!.t).toBeLessThan(ends + 1);
    // After the end, the sale detail is a 404 that the cache answers: the polling stops at the cache.
    const afterEnd = seen.filter((s) => s.t >= ends + 1);
    expect(afterEnd.length).toBeGreaterThan(5);
    expect(afterEnd.every((s) => s.detail === 404)).toBe(true);
    expect(afterEnd.filter((s) => s.detailHit).length / afterEnd.length).toBeGreaterThanOrEqual(0.8);
  }, 30_000);
});
