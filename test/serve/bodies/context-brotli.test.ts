// Sale lists with affid, to a client that accepts brotli: once an insert length has been asked for twice, the body is
// assembled from a brotli template (fewer bytes than the gzip template) and decodes to the same body; a JSONP call
// and a body the placeholders cannot be made for keep gzip.
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { splice } from "../../../src/compress/assemble.ts";
import { brotliInserted, makeBrotliTemplate, placeholderBytes } from "../../../src/compress/context-brotli.ts";
import { withKey } from "../../helpers/fixture.ts";
import type { TestApi } from "../../helpers/fixture.ts";
import { getRaw as rawGet, listBody, onBusyLoop, startListsApi, withAffid as expected } from "../../helpers/affid.ts";

const SALES = 40;
const BUDGET = 256 * 1024;
let api: TestApi;
beforeAll(async () => (api = await startListsApi(SALES, BUDGET)));
afterAll(() => api.close());

/** A GET of `path` with `acceptEncoding`. */
const getRaw = (path: string, acceptEncoding: string) => rawGet(api.url + path, acceptEncoding);

describe("brotli templates of sale lists", () => {
  const path = "/v1/sales/active.json";

  it("after the second ask for an insert length, affid variants are sent as brotli and decode to the same body", async () => {
    const plain = await api.get(withKey(api, path)).then((r) => r.text());
    expect(plain.match(/"sale_url"/g)?.length).toBeGreaterThanOrEqual(SALES);

    // First and second ask: no template yet, so gzip (from pieces); the second starts one.
    for (const affid of ["br0001", "br0002"]) {
      const got = await getRaw(withKey(api, path, `affid=${affid}`), "br, gzip");
      expect(got.encoding).toBe("gzip");
      expect(gunzipSync(got.raw).toString()).toBe(expected(plain, affid));
    }
    await api.handler.idle();

    // Any affid of that length now: brotli, the same body, fewer bytes than any gzip of it.
    const gzipTemplate = await getRaw(withKey(api, path, "affid=gz0001"), "gzip");
    await getRaw(withKey(api, path, "affid=gz0002"), "gzip");
    await api.handler.idle();
    const gzipped = await getRaw(withKey(api, path, "affid=gz0003"), "gzip");
    expect(gzipped.raw.length).toBeLessThan(gzipTemplate.raw.length); // the gzip template's
    for (const affid of ["br0003", "zz-9.Q", "A_b.9-"]) {
      const got = await getRaw(withKey(api, path, `affid=${affid}`), "br, gzip");
      expect(got.encoding).toBe("br");
      expect(brotliDecompressSync(got.raw).toString()).toBe(expected(plain, affid));
      expect(got.raw.length).toBeLessThan(gzipped.raw.length * 0.9);
    }
    // A client that takes gzip only still gets gzip; one that takes nothing, the identity.
    const gzipOnly = await getRaw(withKey(api, path, "affid=br0004"), "gzip");
    expect(gzipOnly.encoding).toBe("gzip");
    expect(gunzipSync(gzipOnly.raw).toString()).toBe(expected(plain, "br0004"));
    const identity = await getRaw(withKey(api, path, "affid=br0005"), "identity");
    expect(identity.encoding).toBeUndefined();
    expect(identity.raw.toString()).toBe(expected(plain, "br0005"));
    expect(api.handler.stats().variantBytes).toBeLessThanOrEqual(BUDGET);
  });

  it("a JSONP call keeps gzip: what goes before the body would move the stream's positions", async () => {
    const plain = await api.get(withKey(api, path)).then((r) => r.text());
    for (const affid of ["cb0001", "cb0002", "cb0003"]) {
      const got = await getRaw(withKey(api, path, `affid=${affid}&callback=cb`), "br, gzip");
      expect(got.encoding).toBe("gzip");
      expect(gunzipSync(got.raw).toString()).toBe(expected(plain, affid, "cb"));
      await api.handler.idle();
    }
  });
});

describe("brotli template", () => {
  const body = Buffer.from(
    JSON.stringify({
      sales: Array.from({ length: 30 }, (_, i) => ({ name: `Sale ${i} – déjà vu`, url: `https://x.test/s/${i}?a=b` })),
    }),
  );
  const links: number[] = [];
  for (const m of body.toString("latin1").matchAll(/"url":"[^"]*"/g)) links.push(m.index + m[0].length - 1);

  it("placeholders use only bytes the body lacks, and no two-byte sequence twice", () => {
    const filler = placeholderBytes(body, 3000)!;
    const inBody = new Set(body);
    const pairs = new Set<number>();
    for (let i = 0; i < filler.length; i++) {
      expect(inBody.has(filler[i]!)).toBe(false);
      if (i > 0) {
        const pair = filler[i - 1]! * 256 + filler[i]!;
        expect(pairs.has(pair)).toBe(false);
        pairs.add(pair);
      }
    }
  });

  it("is refused when the body leaves too few unused bytes for the placeholders", async () => {
    const crowded = Buffer.concat([body, Buffer.from(Array.from({ length: 120 }, (_, i) => 0x80 + i))]);
    expect(placeholderBytes(crowded, 100)).toBeNull(); // 8 bytes left: 64 pairs
    expect(await makeBrotliTemplate(crowded, links, 100)).toBeNull();
  });

  it("decodes, with any insert of its length, to the body with the insert at each link", async () => {
    for (const m of [1, 7, 20, 300]) {
      const template = (await makeBrotliTemplate(body, links, m))!;
      expect(template).not.toBeNull();
      for (const fill of ["q", "Z", "9", "%", "~"]) {
        const insert = Buffer.alloc(m, fill);
        expect(brotliDecompressSync(brotliInserted(template, insert)).equals(splice(body, links, insert))).toBe(true);
      }
    }
  });

  it("is made in a few turns of an event loop busy with requests (not one a flush: some 400 for 100 links)", async () => {
    const { body: list, links: at } = listBody(100);
    const { made, turns } = await onBusyLoop(() => makeBrotliTemplate(list, at, 20));
    expect(made).not.toBeNull();
    const insert = Buffer.alloc(20, "k");
    expect(brotliDecompressSync(brotliInserted(made!, insert)).equals(splice(list, at, insert))).toBe(true);
    expect(turns).toBeLessThan(100);
  });
});
