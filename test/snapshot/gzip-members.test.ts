// The snapshot's gzip variants are ordinary gzip to any decoder, and in the layout whose deflate data splices.
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { gunzipSync, gzipSync, inflateRawSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildSnapshot } from "../../src/build/index.ts";
import { writeSampleCatalog } from "../../src/catalog/sample/index.ts";
import { deflateFragment, FINAL_EMPTY_BLOCK, gzipSpliceable } from "../../src/snapshot/gzip-members.ts";
import type { LoadedSnapshot } from "../../src/snapshot/load.ts";
import { loadSnapshot } from "../../src/snapshot/load.ts";
import { BASE, tempDir } from "../helpers/fixture.ts";

let root: string;
let snapshot: LoadedSnapshot;
beforeAll(async () => {
  root = await tempDir();
  await writeSampleCatalog(join(root, "catalog"), { seed: 3, products: 300, now: new Date("2026-11-22T12:00:00Z") });
  await buildSnapshot({ catalogDir: join(root, "catalog"), dataDir: join(root, "data"), baseUrl: BASE, now: () => Date.parse("2026-11-22T12:00:00Z") });
  snapshot = await loadSnapshot(join(root, "data"));
}, 60_000);
afterAll(() => rm(root, { recursive: true, force: true }));

describe("gzip variants written by the build", () => {
  it("decode to the identity bytes, are byte for byte what gzipSpliceable makes, and yield their deflate data", () => {
    let checked = 0;
    for (const blob of snapshot.blobs.values()) {
      if (!blob.gzip) continue;
      expect(gunzipSync(blob.gzip).equals(blob.identity)).toBe(true);
      expect(blob.gzip.equals(gzipSpliceable(blob.identity))).toBe(true);
      const fragment = deflateFragment(blob.gzip, blob.identity.length);
      expect(fragment).not.toBeNull();
      checked++;
    }
    expect(checked).toBeGreaterThan(300);
  });

  it("splice: the deflate data of several bodies, closed by an empty final block, inflates to the bodies joined", () => {
    const blobs = [...snapshot.products.values()].filter((b) => b.gzip).slice(0, 5);
    const joined = Buffer.concat([...blobs.map((b) => deflateFragment(b.gzip!, b.identity.length)!), FINAL_EMPTY_BLOCK]);
    expect(inflateRawSync(joined).equals(Buffer.concat(blobs.map((b) => b.identity)))).toBe(true);
  });

  it("an ordinary gzip stream, or one whose recorded length differs, is not taken for the layout", () => {
    const body = Buffer.from(JSON.stringify({ name: "Leather Ankle Boot", description: "A sturdy leather boot. ".repeat(40) }));
    expect(deflateFragment(gzipSync(body, { level: 9 }), body.length)).toBeNull();
    expect(deflateFragment(gzipSpliceable(body), body.length + 1)).toBeNull();
    expect(deflateFragment(gzipSpliceable(body), body.length)).not.toBeNull();
  });
});
