// Product bodies are not held from render to pack: the plan renders one again when the pack writer asks for it, and
// the writer refuses bytes that are not the ones the blob's hash was taken of.
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { writePack } from "../../src/generate/pack-writer.ts";
import { blobHash, planSnapshot } from "../../src/generate/plan.ts";
import { loadCatalog } from "../../src/catalog/load.ts";
import { BASE, SITE, standardCatalog, tempDir, writeCatalog } from "../helpers/fixture.ts";

async function plan() {
  const root = await tempDir();
  const catalogDir = await writeCatalog(join(root, "catalog"), standardCatalog());
  const catalog = await loadCatalog(catalogDir, { now: Date.parse("2026-11-22T12:00:00Z") });
  return { root, plan: planSnapshot(catalog, { baseUrl: BASE, siteUrl: SITE }) };
}

describe("product bodies", () => {
  it("are rendered again when asked, to the bytes their hash was taken of", async () => {
    const { plan: p } = await plan();
    const products = Object.values(p.routes.products);
    expect(products.length).toBeGreaterThan(0);
    for (const i of products) {
      const [a, b] = [p.body(i), p.body(i)];
      expect(a).not.toBe(b); // made anew, not kept
      expect(a.equals(b)).toBe(true);
      expect(blobHash(a)).toBe(p.blobs[i]!.hash);
    }
  });

  it("are let go by dropBodies, after which the plan refuses to give one", async () => {
    const { plan: p } = await plan();
    const i = Object.values(p.routes.products)[0]!;
    expect(p.body(i).length).toBe(p.blobs[i]!.size);
    p.dropBodies();
    expect(() => p.body(i)).toThrow(/no body/);
  });

  it("the pack writer refuses a body that does not hash to its blob's hash, and leaves no pack", async () => {
    const { root, plan: p } = await plan();
    const dataDir = join(root, "data");
    const product = Object.values(p.routes.products)[0]!;
    const body = (i: number) => {
      const bytes = Buffer.from(p.body(i));
      if (i === product) bytes[bytes.length >> 1]! ^= 1;
      return bytes;
    };
    await expect(writePack(dataDir, p.blobs, body, new Map())).rejects.toThrow(/hash to another value/);
    expect(await readdir(join(dataDir, "packs"))).toEqual([]);
  });
});
