// Builds real snapshots from catalog files in a temp dir: what is written, what is reused, what a failure leaves.
import { spawnSync } from "node:child_process";
import { mkdir, readdir, readFile, readlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildSnapshot } from "../../src/generate/index.ts";
import { rollback } from "../../src/generate/publish.ts";
import { CatalogError } from "../../src/catalog/problems.ts";
import { loadSnapshot } from "../../src/snapshot/load.ts";
import { product, sale, standardCatalog, tempDir, writeCatalog } from "../helpers/fixture.ts";

async function setup() {
  const root = await tempDir();
  const catalogDir = join(root, "catalog");
  const dataDir = join(root, "data");
  let tick = Date.parse("2026-11-22T12:00:00Z");
  const build = (extra = {}) =>
    buildSnapshot({ catalogDir, dataDir, baseUrl: "http://api.test", now: () => (tick += 1000), ...extra });
  return { root, catalogDir, dataDir, build };
}

const etags = (s: Awaited<ReturnType<typeof loadSnapshot>>) =>
  new Map([...s.products].map(([id, blob]) => [id, blob.hash]));

describe("buildSnapshot", () => {
  it("publishes a snapshot that loads, with every resource of the contract", async () => {
    const { catalogDir, dataDir, build } = await setup();
    await writeCatalog(catalogDir, standardCatalog());
    const result = await build();
    expect(result.changed).toBe(true);
    expect(await readlink(join(dataDir, "current"))).toBe(`snapshots/${result.id}`);
    const snapshot = await loadSnapshot(dataDir);
    expect(snapshot.id).toBe(result.id);
    const paths = [...snapshot.resources.keys()].sort();
    for (const p of [
      "/v1/sales/active.json",
      "/v1/sales/upcoming.json",
      "/v1/sales/women/active.json",
      "/v1/sales/home/upcoming.json",
      "/v1/sales/women/boots/detail.json",
      "/v1/sales/kids/rainy/detail.json",
      "/v1/products/1/detail.json",
      "/v1/products/5/detail.json",
      "/v1/products/categories.json",
      "/v1/products/sizes.json",
    ])
      expect(paths).toContain(p);
    expect(paths).not.toContain("/v1/products/6/detail.json"); // in no sale
    expect(snapshot.manifest.counts.products).toBe(5);
  });

  it("a rebuild with no catalog change writes no file and keeps every ETag", async () => {
    const { catalogDir, dataDir, build } = await setup();
    await writeCatalog(catalogDir, standardCatalog());
    const first = await build();
    const before = etags(await loadSnapshot(dataDir));
    const second = await build();
    expect(second).toMatchObject({ changed: false, id: first.id, filesWritten: 0, bytesWritten: 0 });
    expect(etags(await loadSnapshot(dataDir))).toEqual(before);
  });

  it("after one product changes, rewrites only its blobs and keeps the other ETags", async () => {
    const { catalogDir, dataDir, build } = await setup();
    const catalog = standardCatalog();
    await writeCatalog(catalogDir, catalog);
    await build();
    const before = etags(await loadSnapshot(dataDir));
    catalog.products[0] = product(1, { name: "Renamed Boot" });
    await writeCatalog(catalogDir, catalog);
    const result = await build();
    expect(result.changed).toBe(true);
    expect(result.blobsWritten).toBe(1);
    expect(result.searchIndexReused).toBe(false);
    const after = etags(await loadSnapshot(dataDir));
    for (const [id, hash] of before) {
      if (id === 1) expect(after.get(id)).not.toBe(hash);
      else expect(after.get(id)).toBe(hash);
    }
  });

  it("reusing unchanged products' bodies (and their lines' schema check) gives the snapshot a full build gives", async () => {
    const { catalogDir, dataDir, build } = await setup();
    const catalog = standardCatalog();
    await writeCatalog(catalogDir, catalog);
    await build();
    catalog.products[1] = product(2, { name: "Suede Chelsea Boot II", brand: "Calvin Klein", categories: ["Boots"] });
    await writeCatalog(catalogDir, catalog);
    await build();
    const fresh = join(dataDir, "..", "fresh");
    await buildSnapshot({
      catalogDir,
      dataDir: fresh,
      baseUrl: "http://api.test",
      now: () => Date.parse("2026-11-22T13:00:00Z"),
    });
    const [incremental, full] = [await loadSnapshot(dataDir), await loadSnapshot(fresh)];
    const bodies = (s: typeof full) =>
      new Map(
        [...s.resources].map(([path, segs]) => [
          path,
          segs.map((g) => [
            g.from,
            g.to,
            "sales" in g.body
              ? g.body.sales.map((b) => s.bodies.get(b).identity.toString())
              : s.bodies.get(g.body).identity.toString(),
            "sales" in g.body ? [] : g.body.links,
          ]),
        ]),
      );
    expect(bodies(incremental)).toEqual(bodies(full));
    expect(incremental.bodies.get(incremental.products.get(2)!).identity.toString()).toContain("Suede Chelsea Boot II");
  });

  it("a line taken from the previous build unchecked still meets the cross-line checks, and a changed line the schema", async () => {
    const { catalogDir, build } = await setup();
    const catalog = standardCatalog();
    await writeCatalog(catalogDir, catalog);
    await build();
    const file = join(catalogDir, "products.ndjson");
    const text = await readFile(file, "utf8");
    await writeFile(file, text + text.split("\n")[0] + "\n"); // product 1 again, byte for byte
    const duplicate = await build().catch((e: unknown) => e);
    expect(duplicate).toBeInstanceOf(CatalogError);
    expect((duplicate as CatalogError).report()).toMatch(
      /products\.ndjson:7: id: duplicate product id 1 \(first at products\.ndjson:1\)/,
    );
    await writeFile(file, text.replace('"brand":"Acme Shoes"', '"brand":""'));
    const invalid = await build().catch((e: unknown) => e);
    expect((invalid as CatalogError).report()).toMatch(/products\.ndjson:1: brand: must not be blank/);
  });

  it("a catalog with errors leaves the published snapshot untouched", async () => {
    const { catalogDir, dataDir, build } = await setup();
    await writeCatalog(catalogDir, standardCatalog());
    const good = await build();
    await writeCatalog(catalogDir, { sales: [sale("x", { product_ids: [99] })], products: [product(1)] });
    await expect(build()).rejects.toBeInstanceOf(CatalogError);
    expect((await loadSnapshot(dataDir)).id).toBe(good.id);
    expect((await readdir(join(dataDir, "snapshots"))).filter((n) => n.startsWith(".tmp"))).toEqual([]);
  });

  it("a write error (disk full) fails the build and leaves the published snapshot serving", async () => {
    const { catalogDir, dataDir, build } = await setup();
    await writeCatalog(catalogDir, standardCatalog());
    const good = await build();
    const catalog = standardCatalog();
    catalog.products = catalog.products.map((p) => ({
      ...p,
      name: `${p.name} again`,
      content: { description: "Filler. ".repeat(2000) },
    }));
    await writeCatalog(catalogDir, catalog);
    // A file-size limit makes the pack's write fail with EFBIG, as a full disk fails it with ENOSPC.
    const script = `trap '' XFSZ; ulimit -f 40; exec "${process.execPath}" --import tsx src/cli/build.ts --catalog "${catalogDir}" --data "${dataDir}" --base-url http://api.test`;
    const run = spawnSync("bash", ["-c", script], { encoding: "utf8" });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/EFBIG|too large/i);
    expect((await loadSnapshot(dataDir)).id).toBe(good.id);
    const next = await build(); // and the next build, with room, cleans up and publishes
    expect(next.changed).toBe(true);
    expect((await readdir(join(dataDir, "packs"))).filter((n) => n.startsWith("."))).toEqual([]);
  });

  it("rollback switches back to the previous snapshot", async () => {
    const { catalogDir, dataDir, build } = await setup();
    const catalog = standardCatalog();
    await writeCatalog(catalogDir, catalog);
    const first = await build();
    catalog.products[1] = product(2, { name: "Changed" });
    await writeCatalog(catalogDir, catalog);
    const second = await build();
    expect(second.id).not.toBe(first.id);
    expect(await rollback(dataDir)).toEqual({ from: second.id, to: first.id });
    expect((await loadSnapshot(dataDir)).id).toBe(first.id);
  });

  it("keeps only the configured number of snapshots", async () => {
    const { catalogDir, dataDir, build } = await setup();
    const catalog = standardCatalog();
    for (let i = 0; i < 4; i++) {
      catalog.products[0] = product(1, { name: `Boot number ${i}` });
      await writeCatalog(catalogDir, catalog);
      await build({ keep: 2 });
    }
    expect(await readdir(join(dataDir, "snapshots"))).toHaveLength(2);
    // the blobs of deleted snapshots are gone too, the kept ones' all load
    await loadSnapshot(dataDir);
    const manifest = JSON.parse(await readFile(join(dataDir, "current", "manifest.json"), "utf8"));
    expect(manifest.counts.products).toBe(5);
  });
});

describe("the build lock", () => {
  it("refuses a second build while one holds the lock, and takes over a lock left by a dead process", async () => {
    const { catalogDir, dataDir, build } = await setup();
    await writeCatalog(catalogDir, standardCatalog());
    const { acquireBuildLock, BuildLockedError, LOCK_FILE } = await import("../../src/generate/lock.ts");
    await mkdir(dataDir, { recursive: true });
    const release = await acquireBuildLock(dataDir);
    await expect(build()).rejects.toBeInstanceOf(BuildLockedError);
    await release();
    await writeFile(join(dataDir, LOCK_FILE), "999999999"); // no such process
    expect((await build()).changed).toBe(true);
  });
});
