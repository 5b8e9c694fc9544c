// What a build takes from the published snapshot: one plan on a repack (reused bodies copied byte for byte), a full
// build from a previous snapshot that cannot be read or is of another format, and the product-lines file's round trip.
import { createHash } from "node:crypto";
import { readFile, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { buildSnapshot } from "../../src/generate/index.ts";
import { readPrevious } from "../../src/generate/previous.ts";
import { CATALOG_RULES_VERSION } from "../../src/catalog/load.ts";
import type { Manifest, Routes } from "../../src/snapshot/format.ts";
import {
  DOCUMENT_FILES,
  LINES_FILE,
  LinesFileSchema,
  MANIFEST_FILE,
  ROUTES_FILE,
  SEARCH_INDEX_FILE,
  SNAPSHOT_FORMAT,
} from "../../src/snapshot/format.ts";
import { loadManifest, loadSnapshot, SnapshotError } from "../../src/snapshot/load.ts";
import type { LoadedSnapshot } from "../../src/snapshot/load.ts";
import { product, sale, standardCatalog, tempDir, writeCatalog } from "../helpers/fixture.ts";

const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

async function setup() {
  const root = await tempDir();
  const catalogDir = join(root, "catalog");
  const dataDir = join(root, "data");
  let tick = Date.parse("2026-11-22T12:00:00Z");
  const build = (extra = {}) =>
    buildSnapshot({ catalogDir, dataDir, baseUrl: "http://api.test", now: () => (tick += 1000), ...extra });
  /** The snapshot a full build of the catalog as it is now gives, in a data directory of its own. */
  const fresh = async () => {
    const dir = join(root, `fresh-${tick}`);
    await buildSnapshot({ catalogDir, dataDir: dir, baseUrl: "http://api.test", now: () => tick });
    return loadSnapshot(dir);
  };
  const current = (file: string) => join(dataDir, "current", file);
  return { catalogDir, dataDir, build, fresh, current };
}

/** Every resource's segments with their bodies' bytes: what a client can tell apart. */
const bodies = (s: LoadedSnapshot) =>
  new Map(
    [...s.resources].map(([path, segs]) => [
      path,
      segs.map((g) => [
        g.from,
        g.to,
        "sales" in g.body
          ? g.body.sales.map((b) => s.bodies.get(b).identity.toString())
          : s.bodies.get(g.body).identity.toString(),
      ]),
    ]),
  );

/** The standard catalog and twenty large products in one active sale; `changed` products get another name. */
function catalog(changed: (id: number) => boolean = () => false) {
  const base = standardCatalog();
  const products = Array.from({ length: 20 }, (_, i) => {
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

const editJson = async <T>(path: string, edit: (value: T) => unknown) =>
  writeFile(path, JSON.stringify(edit(JSON.parse(await readFile(path, "utf8")) as T)));

/** Flips one byte in the middle of a file, keeping its size. */
async function flipByte(path: string): Promise<void> {
  const bytes = await readFile(path);
  bytes[bytes.length >> 1]! ^= 0xff;
  await writeFile(path, bytes);
}

describe("a repack", () => {
  // 18 of the 20 large products change: the old pack is mostly dead, so every blob goes into one new pack.
  const mostChanged = (id: number) => id >= 102;

  it("copies the bodies of products reused unrendered from the old pack, byte for byte, from the one plan", async () => {
    const { catalogDir, dataDir, build, fresh, current } = await setup();
    await writeCatalog(catalogDir, catalog());
    await build();
    const before = await loadSnapshot(dataDir);
    await writeCatalog(catalogDir, catalog(mostChanged));
    const result = await build();
    // 25 products on sale, 18 changed: the other 7 are reused unrendered (a second plan, without reuse, made 0).
    expect(result).toMatchObject({ changed: true, repacked: true, productsReused: 7, blobsWritten: result.blobs });
    expect(result.blobsCopied).toBeGreaterThanOrEqual(7);
    const routes = JSON.parse(await readFile(current(ROUTES_FILE), "utf8")) as Routes;
    expect(routes.packs).toHaveLength(1);

    const after = await loadSnapshot(dataDir); // hashes the new pack
    const unchanged = [1, 2, 3, 4, 5, 100, 101];
    for (const id of unchanged) {
      const [old, now] = [before.bodies.get(before.products.get(id)!), after.bodies.get(after.products.get(id)!)];
      expect(now.hash).toBe(old.hash);
      for (const variant of ["identity", "gzip", "br"] as const) expect(now[variant]?.equals(old[variant]!)).toBe(true);
      expect(now.gzipPieces).toEqual(old.gzipPieces);
      expect(now.links).toEqual(old.links);
      expect(gunzipSync(now.gzip!).equals(now.identity)).toBe(true);
      expect(brotliDecompressSync(now.br!).equals(now.identity)).toBe(true);
    }
    expect(bodies(after)).toEqual(bodies(await fresh()));
  });

  it("renders again, rather than copies, what a damaged old pack holds", async () => {
    const { catalogDir, dataDir, build, fresh } = await setup();
    await writeCatalog(catalogDir, catalog());
    await build();
    const [[pack]] = (JSON.parse(await readFile(join(dataDir, "current", ROUTES_FILE), "utf8")) as Routes).packs as [
      [string, number],
    ];
    await flipByte(join(dataDir, "packs", `${pack}.pack`));
    await writeCatalog(catalogDir, catalog(mostChanged));
    const result = await build();
    expect(result).toMatchObject({ repacked: true, productsReused: 7, blobsCopied: 0, blobsWritten: result.blobs });
    const after = await loadSnapshot(dataDir);
    expect(bodies(after)).toEqual(bodies(await fresh()));
  });
});

describe("a previous snapshot that cannot be read or is of another format", () => {
  type Damage = (current: (file: string) => string) => Promise<void>;
  const rewriteLines =
    (current: (file: string) => string, edit: (lines: Record<string, unknown>) => unknown) => async () => {
      await editJson(current(LINES_FILE), edit);
      const digest = sha(await readFile(current(LINES_FILE)));
      await editJson<Manifest>(current(MANIFEST_FILE), (m) => ({ ...m, files: { ...m.files, [LINES_FILE]: digest } }));
    };
  it.each<[string, Damage, { full: boolean; lines: boolean; blobs: boolean }]>([
    [
      "a manifest of another format",
      (c) => editJson<Manifest>(c(MANIFEST_FILE), (m) => ({ ...m, format: SNAPSHOT_FORMAT - 1 })),
      { full: true, lines: false, blobs: false },
    ],
    [
      "a manifest cut short",
      async (c) => writeFile(c(MANIFEST_FILE), (await readFile(c(MANIFEST_FILE))).subarray(0, 40)),
      { full: true, lines: false, blobs: false },
    ],
    [
      "a format 3 manifest holding the documents' digest under files",
      (c) =>
        editJson<Manifest>(c(MANIFEST_FILE), ({ search_docs_digest, ...m }) => ({
          ...m,
          files: { ...m.files, "search-docs": search_docs_digest },
        })),
      { full: true, lines: false, blobs: false },
    ],
    ["routes.json damaged", (c) => flipByte(c(ROUTES_FILE)), { full: false, lines: true, blobs: false }],
    ["product-lines.json damaged", (c) => flipByte(c(LINES_FILE)), { full: false, lines: false, blobs: true }],
    ["product-lines.json missing", (c) => unlink(c(LINES_FILE)), { full: false, lines: false, blobs: true }],
    [
      "product-lines.json of another format (with its digest)",
      (c) => rewriteLines(c, (l) => ({ ...l, rules: String(l.rules) }))(),
      { full: false, lines: false, blobs: true },
    ],
    [
      "product-lines.json with a number for a blob (with its digest)",
      (c) => rewriteLines(c, (l) => ({ ...l, products: { x: 1 } }))(),
      { full: false, lines: false, blobs: true },
    ],
  ])("%s: the parts that cannot be used are made anew", async (_name, damage, expected) => {
    const { catalogDir, dataDir, build, fresh, current } = await setup();
    const changedOne = (id: number) => id === 100;
    await writeCatalog(catalogDir, catalog());
    const first = await build();
    await damage(current);
    // Product 100 changes (so that a build is due whatever the manifest says).
    await writeCatalog(catalogDir, catalog(changedOne));
    const result = await build();
    expect(result.changed).toBe(true);
    // Reused unrendered: the 24 unchanged products, when both their lines and their blobs can be read.
    expect(result.productsReused).toBe(expected.lines && expected.blobs && !expected.full ? 24 : 0);
    // Known blobs stay where they are: only the changed product's body is new, unless the blobs cannot be known.
    expect(result.blobsWritten).toBe(expected.blobs && !expected.full ? 1 : result.blobs);
    expect(result.blobs).toBe(first.blobs);
    expect(bodies(await loadSnapshot(dataDir))).toEqual(bodies(await fresh()));
  });

  it("an unchanged catalog under a manifest of another format is built in full, not taken as unchanged", async () => {
    const { catalogDir, build, current } = await setup();
    await writeCatalog(catalogDir, catalog());
    await build();
    await editJson<Manifest>(current(MANIFEST_FILE), (m) => ({ ...m, format: SNAPSHOT_FORMAT + 1 }));
    const result = await build();
    expect(result).toMatchObject({
      changed: true,
      productsReused: 0,
      searchIndexReused: false,
      blobsWritten: result.blobs,
    });
  });

  it("a damaged search index is built anew, an intact one reused, when the documents are the same", async () => {
    const { catalogDir, build, current } = await setup();
    // A change to the material alone leaves the search documents as they were.
    const material = (m: string) => {
      const c = catalog();
      c.products[0] = product(1, {
        content: { description: "A sturdy leather boot. Goes with everything.", material: m },
      });
      return c;
    };
    await writeCatalog(catalogDir, material("Leather"));
    await build();
    await writeCatalog(catalogDir, material("Suede"));
    expect((await build()).searchIndexReused).toBe(true);
    await flipByte(current(SEARCH_INDEX_FILE));
    await writeCatalog(catalogDir, material("Canvas"));
    expect((await build()).searchIndexReused).toBe(false);
  });

  it("a format 3 manifest without search_docs_digest is refused with the rebuild message", async () => {
    const { catalogDir, dataDir, build, current } = await setup();
    await writeCatalog(catalogDir, catalog());
    const { id } = await build();
    await editJson<Manifest>(current(MANIFEST_FILE), ({ search_docs_digest, ...m }) => ({
      ...m,
      files: { ...m.files, "search-docs": search_docs_digest },
    }));
    const refusal = await loadManifest(dataDir, id).catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(SnapshotError);
    expect((refusal as Error).message).toBe(
      `${join(dataDir, "snapshots", id, MANIFEST_FILE)}: snapshot format ${SNAPSHOT_FORMAT} without search_docs_digest (written before it was added): rebuild the snapshot`,
    );
  });
});

describe("the product-lines file and the manifest", () => {
  it("round trip: what the build writes, readPrevious reads back, and the manifest records only real files", async () => {
    const { catalogDir, dataDir, build, current } = await setup();
    await writeCatalog(catalogDir, catalog());
    await build();
    const manifest = JSON.parse(await readFile(current(MANIFEST_FILE), "utf8")) as Manifest;
    expect(Object.keys(manifest.files).sort()).toEqual(
      [LINES_FILE, ROUTES_FILE, SEARCH_INDEX_FILE, ...DOCUMENT_FILES].sort(),
    );
    for (const [file, digest] of Object.entries(manifest.files))
      expect(sha(await readFile(current(file)))).toBe(digest);
    expect(manifest.search_docs_digest).toMatch(/^[0-9a-f]{64}$/);
    expect(manifest.docs_page_digest).toMatch(/^[0-9a-f]{64}$/);

    const lines = LinesFileSchema.parse(JSON.parse(await readFile(current(LINES_FILE), "utf8")));
    expect(lines.rules).toBe(CATALOG_RULES_VERSION);
    expect(lines.render).toMatch(/^[0-9a-f]{32}$/);
    // One entry per product line: the 25 products on sale to their blobs, product 6 (in no sale) to "".
    const routes = JSON.parse(await readFile(current(ROUTES_FILE), "utf8")) as Routes;
    const productHashes = Object.values(routes.products).map((i) => routes.blobs[i]![0]);
    expect(Object.values(lines.products).sort()).toEqual(["", ...productHashes].sort());

    const previous = await readPrevious(dataDir);
    if (!previous || previous.unchanged) throw new Error("expected the snapshot's parts");
    expect(previous.manifest).toEqual(manifest);
    expect(previous.lines).toEqual({
      rules: lines.rules,
      render: lines.render,
      products: new Map(Object.entries(lines.products)),
    });
    expect(previous.blobs.size).toBe(manifest.counts.blobs);
    for (const [i, entry] of routes.blobs.entries()) {
      const known = previous.blobs.get(entry[0])!;
      expect(known.pack).toBe(routes.packs[entry[5]]![0]);
      expect([
        known.record.hash,
        known.record.size,
        known.record.gzipSize,
        known.record.brSize,
        known.record.links,
        known.record.pack,
        known.record.offset,
        known.record.gzipPieces,
      ]).toEqual(routes.blobs[i]);
    }
    expect(previous.searchIndex?.docsDigest).toBe(manifest.search_docs_digest);
    expect(sha(previous.searchIndex!.bytes)).toBe(manifest.files[SEARCH_INDEX_FILE]);
    expect(await readPrevious(dataDir, () => true)).toEqual({ unchanged: true, id: previous.id, manifest });
  });

  it.each([
    ["a render key", { rules: 1, render: "abc", products: { a: "", b: "0123" } }, true],
    ["no render key", { rules: 1, render: null, products: {} }, true],
    ["rules as text", { rules: "1", render: null, products: {} }, false],
    ["a number for a blob", { rules: 1, render: null, products: { a: 5 } }, false],
    ["products as a list", { rules: 1, render: null, products: [] }, false],
    ["an unknown field", { rules: 1, render: null, products: {}, extra: 1 }, false],
  ])("LinesFileSchema: %s", (_name, value, ok) => {
    expect(LinesFileSchema.safeParse(value).success).toBe(ok);
  });
});
