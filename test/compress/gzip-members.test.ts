// The snapshot's gzip variants are ordinary gzip to any decoder, and in the layout whose deflate data splices.
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { gunzipSync, gzipSync, inflateRawSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildSnapshot } from "../../src/generate/index.ts";
import { writeSampleCatalog } from "../../src/catalog/sample/index.ts";
import { deflateFragment, FINAL_EMPTY_BLOCK, gzipSpliceable, gzipSplit } from "../../src/compress/gzip-members.ts";
import type { LoadedSnapshot } from "../../src/snapshot/load.ts";
import { loadSnapshot } from "../../src/snapshot/load.ts";
import { BASE, tempDir } from "../helpers/fixture.ts";

let root: string;
let snapshot: LoadedSnapshot;
beforeAll(async () => {
  root = await tempDir();
  await writeSampleCatalog(join(root, "catalog"), { seed: 3, products: 300, now: new Date("2026-11-22T12:00:00Z") });
  await buildSnapshot({
    catalogDir: join(root, "catalog"),
    dataDir: join(root, "data"),
    baseUrl: BASE,
    now: () => Date.parse("2026-11-22T12:00:00Z"),
  });
  snapshot = await loadSnapshot(join(root, "data"));
}, 60_000);
afterAll(() => rm(root, { recursive: true, force: true }));

describe("gzip variants written by the build", () => {
  it("decode to the identity bytes, are byte for byte what gzipSplit makes (split at the page links), and yield their deflate data", () => {
    let checked = 0;
    let split = 0;
    for (const blob of [...snapshot.blobs.values()].map((ref) => snapshot.bodies.get(ref))) {
      if (!blob.gzip) continue;
      expect(gunzipSync(blob.gzip).equals(blob.identity)).toBe(true);
      const made = gzipSplit(blob.identity, blob.links);
      expect(blob.gzip.equals(made.gzip)).toBe(true);
      expect(blob.gzipPieces).toEqual(made.pieces);
      expect(blob.gzipPieces).toHaveLength(blob.links.length);
      if (blob.links.length > 0) split++;
      const fragment = deflateFragment(blob.gzip, blob.identity.length);
      expect(fragment).not.toBeNull();
      checked++;
    }
    expect(checked).toBeGreaterThan(300);
    expect(split).toBeGreaterThan(300);
  });

  it("a piece boundary is a splice point: bytes put between the pieces inflate in place", () => {
    const blob = [...snapshot.products.values()]
      .map((ref) => snapshot.bodies.get(ref))
      .find((b) => b.gzip && b.links.length === 1)!;
    const data = deflateFragment(blob.gzip!, blob.identity.length)!;
    const insert = Buffer.from("&affid=x");
    const stored = Buffer.concat([Buffer.from([0, insert.length, 0, ~insert.length & 0xff, 0xff]), insert]);
    const cut = blob.gzipPieces[0]!;
    const joined = Buffer.concat([data.subarray(0, cut), stored, data.subarray(cut), FINAL_EMPTY_BLOCK]);
    const at = blob.links[0]!;
    expect(
      inflateRawSync(joined).equals(Buffer.concat([blob.identity.subarray(0, at), insert, blob.identity.subarray(at)])),
    ).toBe(true);
  });

  it("splice: the deflate data of several bodies, closed by an empty final block, inflates to the bodies joined", () => {
    const blobs = [...snapshot.products.values()]
      .map((ref) => snapshot.bodies.get(ref))
      .filter((b) => b.gzip)
      .slice(0, 5);
    const joined = Buffer.concat([
      ...blobs.map((b) => deflateFragment(b.gzip!, b.identity.length)!),
      FINAL_EMPTY_BLOCK,
    ]);
    expect(inflateRawSync(joined).equals(Buffer.concat(blobs.map((b) => b.identity)))).toBe(true);
  });

  it("an ordinary gzip stream, or one whose recorded length differs, is not taken for the layout", () => {
    const body = Buffer.from(
      JSON.stringify({ name: "Leather Ankle Boot", description: "A sturdy leather boot. ".repeat(40) }),
    );
    expect(deflateFragment(gzipSync(body, { level: 9 }), body.length)).toBeNull();
    expect(deflateFragment(gzipSpliceable(body), body.length + 1)).toBeNull();
    expect(deflateFragment(gzipSpliceable(body), body.length)).not.toBeNull();
  });
});
