// An upgrade that changes how a body renders re-renders every body it affects: the code is copied to a temp dir,
// a snapshot built with it, the copy's rendering changed in one optional field, one product line changed, and
// the incremental build that follows must hold no body rendered by the old code.
import { spawnSync } from "node:child_process";
import { cp, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BlobRef } from "../../src/snapshot/body-cache.ts";
import { loadSnapshot } from "../../src/snapshot/load.ts";
import type { LoadedSnapshot } from "../../src/snapshot/load.ts";
import { BASE, product, sale, standardCatalog, tempDir, writeCatalog } from "../helpers/fixture.ts";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
let root: string;
let app: string;

beforeAll(async () => {
  root = await tempDir("fsa-render-key-");
  app = join(root, "app");
  await cp(join(REPO, "src"), join(app, "src"), { recursive: true });
  await symlink(join(REPO, "node_modules"), join(app, "node_modules"));
  await writeFile(join(app, "package.json"), JSON.stringify({ type: "module" }));
});
afterAll(async () => {
  const { rm } = await import("node:fs/promises");
  await rm(root, { recursive: true, force: true });
});

/** Runs the copied code's build CLI; returns its summary line. */
function build(catalogDir: string, dataDir: string): string {
  const r = spawnSync(
    process.execPath,
    ["--import", "tsx", "src/cli/build.ts", "--catalog", catalogDir, "--data", dataDir, "--base-url", BASE],
    { cwd: app, encoding: "utf8", env: { ...process.env, DATA_DIR: dataDir } },
  );
  if (r.status !== 0) throw new Error(`build failed (${r.status}): ${r.stderr}`);
  return r.stdout;
}

/** Changes one line of the copied code (the edit an upgrade would make). */
async function editCopy(file: string, from: string, to: string): Promise<void> {
  const path = join(app, file);
  const text = await readFile(path, "utf8");
  expect(text).toContain(from);
  await writeFile(path, text.replace(from, to));
}

/** Twenty products, a third of them with an origin and a shipping surcharge, all in one active sale. */
function catalog(nameOf3 = "Silk Wrap Dress") {
  const base = standardCatalog();
  const products = Array.from({ length: 20 }, (_, i) => {
    const id = 100 + i;
    const p = product(id, { name: id === 103 ? nameOf3 : `Leather Ankle Boot ${id}` });
    return i % 3 === 0 ? { ...p, content: { ...p.content, origin: "Portugal" } } : p;
  });
  return {
    products: [...base.products, ...products],
    sales: [...base.sales, sale("many", { product_ids: products.map((p) => p.id) })],
  };
}

/** A temp catalog and data dir, the catalog built once with the copied code. */
async function builtOnce(): Promise<{ catalogDir: string; dataDir: string }> {
  const dir = await tempDir("fsa-render-key-case-");
  const catalogDir = join(dir, "catalog");
  const dataDir = join(dir, "data");
  await writeCatalog(catalogDir, catalog());
  build(catalogDir, dataDir);
  return { catalogDir, dataDir };
}

describe("render key", () => {
  it.each([
    [
      "content.origin",
      "src/generate/render.ts",
      "      origin: content.origin,",
      "      country_of_origin: content.origin,",
      '"origin":',
      '"country_of_origin":"Portugal"',
    ],
    [
      "shipping_surcharge",
      "src/generate/render.ts",
      "      shipping_surcharge: sku.shipping_surcharge,",
      "      shipping_fee: sku.shipping_surcharge,",
      '"shipping_surcharge":',
      '"shipping_fee":"5.00"',
    ],
  ])(
    "a change to how %s renders, then a 1-product change: no body of the old code is left",
    async (_field, file, from, to, oldText, newText) => {
      const { catalogDir, dataDir } = await builtOnce();
      const before = await loadSnapshot(dataDir);
      const identity = (s: LoadedSnapshot, ref: BlobRef) => s.bodies.get(ref).identity;
      const withOld = [...before.products.values()].filter((b) => identity(before, b).includes(oldText)).length;
      expect(withOld).toBeGreaterThan(5);

      await editCopy(file, from, to);
      try {
        await writeCatalog(catalogDir, catalog("Silk Wrap Dress, Long"));
        build(catalogDir, dataDir);
        const after = await loadSnapshot(dataDir);
        expect(after.id).not.toBe(before.id);
        const stale = [...after.products.entries()]
          .filter(([, b]) => identity(after, b).includes(oldText))
          .map(([id]) => id);
        expect(stale).toEqual([]);
        expect([...after.products.values()].filter((b) => identity(after, b).includes(newText)).length).toBe(withOld);
      } finally {
        await editCopy(file, to, from);
      }
    },
    120_000,
  );

  it("a code change with the catalog unchanged rebuilds: the no-change shortcut is keyed by the build's code", async () => {
    const { catalogDir, dataDir } = await builtOnce();
    const first = await loadSnapshot(dataDir);
    expect(build(catalogDir, dataDir)).toContain(`catalog unchanged: kept ${first.id}, wrote nothing`);
    // Size keys listed in another order: only the sizes resource changes, the catalog does not.
    const from = "  if (ka !== kb) return ka - kb;";
    await editCopy("src/generate/size-order.ts", from, "  if (ka !== kb) return kb - ka;");
    try {
      const out = build(catalogDir, dataDir);
      expect(out).not.toContain("catalog unchanged");
      const second = await loadSnapshot(dataDir);
      expect(second.id).not.toBe(first.id);
      expect(build(catalogDir, dataDir)).toContain(`catalog unchanged: kept ${second.id}, wrote nothing`);
    } finally {
      await editCopy("src/generate/size-order.ts", "  if (ka !== kb) return kb - ka;", from);
    }
  }, 120_000);

  it("an unchanged code and catalog rebuild reuses every product body (the key is stable)", async () => {
    const { catalogDir, dataDir } = await builtOnce();
    await writeCatalog(catalogDir, catalog("Silk Wrap Dress, Long"));
    const lines = JSON.parse(await readFile(join(dataDir, "current", "product-lines.json"), "utf8")) as {
      render: string | null;
    };
    expect(lines.render).toMatch(/^[0-9a-f]{32}$/);
    const out = build(catalogDir, dataDir);
    const after = JSON.parse(await readFile(join(dataDir, "current", "product-lines.json"), "utf8")) as {
      render: string | null;
    };
    expect(after.render).toBe(lines.render);
    // 25 products on sale; the one whose line changed is rendered, the other 24 reused.
    expect(out).toContain("24 product bodies reused");
  }, 120_000);
});
