// Packs are split at maxPackBytes (a server reads each pack whole; fs.readFile stops at 2 GiB): a build of many
// packs loads to the same bodies as a build of one, and a rebuild keeps those packs and adds its own.
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { buildSnapshot } from "../../src/generate/index.ts";
import type { Routes } from "../../src/snapshot/format.ts";
import { ROUTES_FILE } from "../../src/snapshot/format.ts";
import { loadSnapshot } from "../../src/snapshot/load.ts";
import type { LoadedSnapshot } from "../../src/snapshot/load.ts";
import { DOCS_CACHE, product, sale, standardCatalog, tempDir, writeCatalog } from "../helpers/fixture.ts";

const MAX = 16_384;

/** The standard catalog and forty large products in one active sale; `changed` products get another name. */
function catalog(changed: (id: number) => boolean = () => false) {
  const base = standardCatalog();
  const products = Array.from({ length: 40 }, (_, i) => {
    const id = 100 + i;
    return product(id, {
      name: `Boot ${id}${changed(id) ? " II" : ""}`,
      content: { description: `Leather boot ${id}, stitched by hand. `.repeat(40) },
    });
  });
  return {
    products: [...base.products, ...products],
    sales: [...base.sales, sale("many", { product_ids: products.map((p) => p.id) })],
  };
}

async function setup() {
  const root = await tempDir();
  const catalogDir = join(root, "catalog");
  const tick = Date.parse("2026-11-22T12:00:00Z");
  const build = (dataDir: string, maxPackBytes?: number) =>
    buildSnapshot({
      catalogDir,
      dataDir: join(root, dataDir),
      baseUrl: "http://api.test",
      now: () => tick,
      docsCacheDir: DOCS_CACHE,
      maxPackBytes,
    });
  const routes = async (dataDir: string) =>
    JSON.parse(await readFile(join(root, dataDir, "current", ROUTES_FILE), "utf8")) as Routes;
  return { root, catalogDir, build, routes };
}

/** Every resource's segments with their bodies' bytes, in every encoding. */
const bodies = (s: LoadedSnapshot) =>
  [...s.resources].map(([path, segs]) => [
    path,
    segs.map((g) =>
      ("sales" in g.body ? g.body.sales : [g.body])
        .map((ref) => s.bodies.get(ref))
        .map((b) => [b.identity, b.gzip, b.br].map((x) => x?.toString("hex"))),
    ),
  ]);

/** Checks each pack against its name and the limit: over MAX only when it holds a single blob. */
async function checkPacks(root: string, dataDir: string, routes: Routes) {
  for (const [p, [name, size]] of routes.packs.entries()) {
    const bytes = await readFile(join(root, dataDir, "packs", `${name}.pack`));
    expect(bytes.length).toBe(size);
    expect(createHash("sha256").update(bytes).digest("hex").slice(0, 32)).toBe(name);
    const blobs = routes.blobs.filter((b) => b[5] === p);
    expect(blobs.length).toBeGreaterThan(0);
    if (blobs.length > 1) expect(size).toBeLessThanOrEqual(MAX);
  }
}

describe("packs split at maxPackBytes", () => {
  it("writes several packs, each within the limit, that load to the same bodies as one pack", async () => {
    const { root, catalogDir, build, routes } = await setup();
    await writeCatalog(catalogDir, catalog());
    const one = await build("one");
    const many = await build("many", MAX);
    const [oneRoutes, manyRoutes] = [await routes("one"), await routes("many")];
    expect(oneRoutes.packs).toHaveLength(1);
    expect(manyRoutes.packs.length).toBeGreaterThan(3);
    expect(many.filesWritten - one.filesWritten).toBe(manyRoutes.packs.length - 1);
    const packBytes = (r: Routes) => r.packs.reduce((n, [, size]) => n + size, 0);
    expect(packBytes(manyRoutes)).toBe(packBytes(oneRoutes));
    await checkPacks(root, "many", manyRoutes);

    const loaded = await loadSnapshot(join(root, "many")); // hashes every pack
    expect(bodies(loaded)).toEqual(bodies(await loadSnapshot(join(root, "one"))));
    for (const blob of [...loaded.products.values()].map((ref) => loaded.bodies.get(ref))) {
      expect(gunzipSync(blob.gzip!).equals(blob.identity)).toBe(true);
      expect(brotliDecompressSync(blob.br!).equals(blob.identity)).toBe(true);
    }
  });

  it("a small rebuild keeps the full packs, adds its own, and is not repacked", async () => {
    const { root, catalogDir, build, routes } = await setup();
    await writeCatalog(catalogDir, catalog());
    await build("data", MAX);
    const before = await routes("data");
    await writeCatalog(
      catalogDir,
      catalog((id) => id === 100),
    );
    const result = await build("data", MAX);
    expect(result).toMatchObject({ changed: true, repacked: false });
    const after = await routes("data");
    const names = after.packs.map(([name]) => name);
    // The old packs still used are kept as they are; the changed product's body went into a new one.
    expect(names.filter((n) => before.packs.some(([old]) => old === n)).length).toBeGreaterThanOrEqual(
      before.packs.length - 1,
    );
    expect(names.length).toBeGreaterThan(before.packs.length - 1);
    await checkPacks(root, "data", after);
    const fresh = await build("fresh", MAX);
    expect(fresh.changed).toBe(true);
    expect(bodies(await loadSnapshot(join(root, "data")))).toEqual(bodies(await loadSnapshot(join(root, "fresh"))));
  });
});
