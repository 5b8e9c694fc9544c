// Sale lists with affid: once an insert length has been asked for twice, the gzip is assembled from a template
// compressed with context (about half the bytes of pieces compressed on their own), and it is the same body.
import { gunzipSync, inflateRawSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withKey } from "../../helpers/fixture.ts";
import type { TestApi } from "../../helpers/fixture.ts";
import { splice } from "../../../src/compress/assemble.ts";
import { makeTemplate } from "../../../src/compress/context-gzip.ts";
import { storedPiece } from "../../../src/compress/pieces.ts";
import { getRaw as rawGet, listBody, onBusyLoop, startListsApi, withAffid as expected } from "../../helpers/affid.ts";

const SALES = 40;
const BUDGET = 256 * 1024;
let api: TestApi;
beforeAll(async () => (api = await startListsApi(SALES, BUDGET)));
afterAll(() => api.close());

/** A GET of `path` with `Accept-Encoding: gzip`. */
const getGzip = (path: string) => rawGet(api.url + path, "gzip");

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

describe("gzip template", () => {
  it("is made in a few turns of an event loop busy with requests (not one a piece: 101 for 100 links)", async () => {
    const { body, links } = listBody(100);
    const base = {
      deflate: Buffer.alloc(0),
      cuts: new Int32Array(0),
      c: new Uint32Array(101),
      d: new Uint32Array(100),
      length: body.length,
      segmentViews: null,
    };
    const { made, turns } = await onBusyLoop(() => makeTemplate(body, links, base, 20));
    // Its segments with the insert stored between them, then an empty final block: the body with the insert.
    const insert = Buffer.alloc(20, "k");
    const parts = [...made.cuts].map((end, i) => made.deflate.subarray(i === 0 ? 0 : made.cuts[i - 1], end));
    const stream = Buffer.concat([
      ...parts.flatMap((p, i) => (i === 0 ? [p] : [storedPiece(insert).deflate, p])),
      Buffer.from([3, 0]),
    ]);
    expect(inflateRawSync(stream).equals(splice(body, links, insert))).toBe(true);
    expect(turns).toBeLessThan(30);
  });
});
