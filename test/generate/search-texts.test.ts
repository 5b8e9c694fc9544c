// The search index of an incremental build, made from the previous build's analysed texts, is byte for byte the index
// a full build of the same catalog makes: after texts change, products come and go and sales move, after the texts
// file is damaged, and after the tokenizer's code changes (the file is keyed by that code's digest).
import { spawnSync } from "node:child_process";
import { cp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildSnapshot } from "../../src/generate/index.ts";
import { decodeSearchTexts, SEARCH_TEXTS_FILE, searchTextsCode } from "../../src/generate/search-text.ts";
import type { Product } from "../../src/catalog/schema.ts";
import { SEARCH_INDEX_FILE } from "../../src/snapshot/format.ts";
import {
  BASE,
  DOCS_CACHE,
  iso,
  product,
  sale,
  standardCatalog,
  T0,
  tempDir,
  writeCatalog,
} from "../helpers/fixture.ts";

/** Texts with what the tokenizer treats specially: hyphens, apostrophes, accents, digits, stop words, repeats. */
const TEXTS = [
  ["T-Shirt Crew Neck", "A soft t-shirt. Levi's classic crew-neck tee, 100% cotton."],
  ["Café Crème Mug", "Stoneware mug; the café au lait size. Dishwasher safe, safe, safe."],
  ["Straße Boots", "Boots for the street: boots that go with everything, in ５０１ sizes."],
  ["Running Shoes", "Lightweight running shoes with a breathable mesh upper."],
  ["Wool Overcoat", "A long overcoat in heavy wool; fully lined, two pockets."],
  ["Silk Scarf", ""],
] as const;

/** Thirty products over two sales; `edit` may change, drop (null) or add products. */
function catalog(edit: (p: Product) => Product | null = (p) => p, extra: Product[] = []) {
  const base = standardCatalog();
  const made = Array.from({ length: 30 }, (_, i) => {
    const [name, description] = TEXTS[i % TEXTS.length]!;
    return product(200 + i, { name: `${name} ${i}`, content: { description } });
  });
  const products = [...made.map(edit).filter((p): p is Product => p !== null), ...extra];
  const ids = products.filter((p) => p.id >= 200).map((p) => p.id);
  return {
    products: [...base.products, ...products],
    sales: [
      ...base.sales,
      sale("many", { product_ids: ids.filter((id) => id % 2 === 0) }),
      sale("later", { store: "men", begins: iso(T0 + 3600), product_ids: ids.filter((id) => id % 2 === 1) }),
    ],
  };
}

async function setup() {
  const root = await tempDir("fsa-search-texts-");
  const catalogDir = join(root, "catalog");
  const dataDir = join(root, "data");
  let tick = Date.parse("2026-11-22T12:00:00Z");
  const options = { baseUrl: BASE, docsCacheDir: DOCS_CACHE, now: () => (tick += 1000) };
  const build = (extra = {}) => buildSnapshot({ catalogDir, dataDir, ...options, ...extra });
  /** The files a full build of the catalog as it is now gives, in a data directory of its own. */
  const fresh = async (name: string) => {
    const dir = join(root, `fresh-${tick}`);
    await buildSnapshot({ catalogDir, dataDir: dir, ...options });
    return readFile(join(dir, "current", name));
  };
  const current = (name: string) => readFile(join(dataDir, "current", name));
  return { catalogDir, dataDir, build, fresh, current };
}

/** Three texts changed, one product gone, one new, one moved to the other sale (its windows change). */
const changed = () =>
  catalog(
    (p) =>
      p.id === 203
        ? null
        : p.id === 201 || p.id === 207
          ? { ...p, name: `${p.name} Deluxe`, content: { description: "Hand-stitched in Portugal: a boot's boot." } }
          : p.id === 212
            ? { ...p, content: { description: `${p.content.description ?? ""} Now in navy.` } }
            : p,
    [product(260, { name: "Brand-New Café Boot", content: { description: "New, new, new." } })],
  );

describe("the search index of an incremental build", () => {
  it("is the full build's, byte for byte, and so is the texts file beside it", async () => {
    const { catalogDir, build, fresh, current } = await setup();
    await writeCatalog(catalogDir, catalog());
    const first = await build();
    expect(first.searchTextsReused).toBe(0);
    await writeCatalog(catalogDir, changed());
    const result = await build();
    expect(result).toMatchObject({ changed: true, searchIndexReused: false });
    // 35 products but 3 with new texts; texts repeat (each of the 6 words 5 times over 30 products, numbered).
    expect(result.searchTextsReused).toBeGreaterThan(25);
    expect((await current(SEARCH_INDEX_FILE)).equals(await fresh(SEARCH_INDEX_FILE))).toBe(true);
    expect((await current(SEARCH_TEXTS_FILE)).equals(await fresh(SEARCH_TEXTS_FILE))).toBe(true);
  });

  it("reuses the whole index, texts file included, when only what the index does not hold changes", async () => {
    const { catalogDir, build, current } = await setup();
    await writeCatalog(catalogDir, catalog());
    await build();
    const texts = await current(SEARCH_TEXTS_FILE);
    await writeCatalog(
      catalogDir,
      catalog((p) => (p.id === 205 ? { ...p, page_path: "/product/205-elsewhere" } : p)),
    );
    expect(await build()).toMatchObject({ changed: true, searchIndexReused: true });
    expect((await current(SEARCH_TEXTS_FILE)).equals(texts)).toBe(true);
    // The next build takes its texts from the linked file.
    await writeCatalog(catalogDir, changed());
    expect((await build()).searchTextsReused).toBeGreaterThan(25);
  });

  it.each([
    [
      "damaged",
      (b: Buffer) =>
        Buffer.concat([
          b.subarray(0, b.length >> 1),
          Buffer.from([~b[b.length >> 1]!]),
          b.subarray((b.length >> 1) + 1),
        ]),
    ],
    ["cut short", (b: Buffer) => b.subarray(0, b.length - 8)],
    ["empty", () => Buffer.alloc(0)],
  ])("with the texts file %s, analyses every text anew and gives the same index", async (_name, damage) => {
    const { catalogDir, dataDir, build, fresh, current } = await setup();
    await writeCatalog(catalogDir, catalog());
    await build();
    const path = join(dataDir, "current", SEARCH_TEXTS_FILE);
    await writeFile(path, damage(await readFile(path)));
    await writeCatalog(catalogDir, changed());
    expect((await build()).searchTextsReused).toBe(0);
    expect((await current(SEARCH_INDEX_FILE)).equals(await fresh(SEARCH_INDEX_FILE))).toBe(true);
  });

  it("a forced build analyses every text anew", async () => {
    const { catalogDir, build } = await setup();
    await writeCatalog(catalogDir, catalog());
    await build();
    await writeCatalog(catalogDir, changed());
    expect((await build({ force: true })).searchTextsReused).toBe(0);
  });

  it("a texts file made under other code is not read", async () => {
    const { catalogDir, build, current } = await setup();
    await writeCatalog(catalogDir, catalog());
    await build();
    const bytes = await current(SEARCH_TEXTS_FILE);
    const code = searchTextsCode()!;
    expect(decodeSearchTexts(bytes, code)).not.toBeNull();
    expect(
      decodeSearchTexts(
        bytes,
        code.replace(/^./, (c) => (c === "0" ? "1" : "0")),
      ),
    ).toBeNull();
  });
});

// An upgrade that changes what a text tokenizes to: the code is copied to a temp dir and run as the build CLI.
describe("after a change to the tokenizer", () => {
  const REPO = fileURLToPath(new URL("../..", import.meta.url));
  let root: string;
  let app: string;
  beforeAll(async () => {
    root = await tempDir("fsa-search-texts-code-");
    app = join(root, "app");
    await cp(join(REPO, "src"), join(app, "src"), { recursive: true });
    await symlink(join(REPO, "node_modules"), join(app, "node_modules"));
    await writeFile(join(app, "package.json"), JSON.stringify({ type: "module" }));
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  const build = (catalogDir: string, dataDir: string) => {
    const r = spawnSync(
      process.execPath,
      ["--import", "tsx", "src/cli/build.ts", "--catalog", catalogDir, "--data", dataDir, "--base-url", BASE],
      { cwd: app, encoding: "utf8", env: { ...process.env, DATA_DIR: dataDir } },
    );
    if (r.status !== 0) throw new Error(`build failed (${r.status}): ${r.stderr}`);
  };

  it("an incremental build's index is the new code's full build's, not one made of the old code's texts", async () => {
    const dir = await tempDir("fsa-search-texts-case-");
    const catalogDir = join(dir, "catalog");
    const dataDir = join(dir, "data");
    await writeCatalog(catalogDir, catalog());
    build(catalogDir, dataDir);
    const before = await readFile(join(dataDir, "current", SEARCH_INDEX_FILE));
    // "boots" becomes a stop word: every text that has it tokenizes to other terms.
    const file = join(app, "src/search/tokenize.ts");
    const source = await readFile(file, "utf8");
    expect(source).toContain('  "with",\n');
    await writeFile(file, source.replace('  "with",\n', '  "with",\n  "boots",\n'));
    try {
      await writeCatalog(catalogDir, changed());
      build(catalogDir, dataDir);
      build(catalogDir, join(dir, "fresh"));
      const after = await readFile(join(dataDir, "current", SEARCH_INDEX_FILE));
      expect(after.equals(await readFile(join(dir, "fresh", "current", SEARCH_INDEX_FILE)))).toBe(true);
      expect(after.includes("boots")).toBe(false);
      expect(before.includes("boots")).toBe(true);
    } finally {
      await writeFile(file, source);
    }
  }, 120_000);
});
