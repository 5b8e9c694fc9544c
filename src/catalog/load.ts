// Streams a catalog directory (catalog.json, sales*.ndjson, products*.ndjson), validates it, and reports every problem.
import { createHash, hash } from "node:crypto";
import { createReadStream } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import fg from "fast-glob";
import type { z } from "zod";
import { CatalogError, ProblemList } from "./problems.ts";
import { CatalogMetaSchema, ProductSchema, SaleSchema } from "./schema.ts";
import type { CatalogMeta, Product, Sale } from "./schema.ts";
import { checkCatalog, checkProduct, checkSale, createCheckContext } from "./checks.ts";
import { forEachLine } from "./lines.ts";

/** A sale after validation, with its instants as epoch seconds. */
export interface CatalogSale extends Sale {
  /** `begins` as epoch seconds. */
  beginsAt: number;
  /** `ends` as epoch seconds, or null for an open-ended sale. */
  endsAt: number | null;
  /** Where it was read, for messages: `sales.ndjson:12`. */
  source: string;
}

export interface Catalog {
  meta: CatalogMeta;
  sales: CatalogSale[];
  /** Products by ID, in file order. */
  products: Map<number, Product>;
  /** `digestCatalog` of the directory, taken before it was read. */
  digest: string;
  /** Warnings found (odd but harmless); errors are thrown as a CatalogError. */
  problems: ProblemList;
  /** Each product's line digest (lineDigest of its NDJSON text): the same text is the same product. */
  productLines: Map<number, string>;
}

/**
 * The digest of a catalog line's text, with the rules it was checked under: a line whose digest a previous build
 * recorded passed the schema then and would pass it now. Bump CATALOG_RULES_VERSION with any change to the schemas.
 */
export const CATALOG_RULES_VERSION = 1;
export function lineDigest(text: string): string {
  return hash("sha1", text, "base64");
}

export interface LoadCatalogOptions {
  /** Current time in epoch ms, for the warnings that depend on it (a sale that has already ended). Default: Date.now(). */
  now?: number;
  /** The catalog's digest if the caller has already taken it (see digestCatalog). */
  digest?: string;
  /**
   * Digests (lineDigest) of product lines a previous build validated under CATALOG_RULES_VERSION: such a line is
   * taken as parsed, without the schema check (cross-line checks, duplicates and references still run on it).
   */
  validLines?: ReadonlySet<string>;
}

const META_FILE = "catalog.json";

/** Loads and validates a catalog directory; throws CatalogError listing every problem if there is any error. */
export async function loadCatalog(dir: string, options: LoadCatalogOptions = {}): Promise<Catalog> {
  const problems = new ProblemList();
  const digest = options.digest ?? (await digestCatalog(dir));
  const meta = await loadMeta(dir, problems);
  const { saleFiles, productFiles } = await catalogFiles(dir);
  if (saleFiles.length === 0)
    problems.error("sales.ndjson", 0, "", "no sales file (sales*.ndjson) in the catalog directory");
  if (productFiles.length === 0)
    problems.error("products.ndjson", 0, "", "no products file (products*.ndjson) in the catalog directory");

  const products = new Map<number, Product>();
  const productSource = new Map<number, string>();
  const invalidProductIds = new Set<number>();
  const ctx = createCheckContext(problems);
  const productLines = new Map<number, string>();
  const validLines = options.validLines;
  for (const file of productFiles) {
    await readNdjson(dir, file, problems, (value, line, text) => {
      const lineHash = lineDigest(text);
      const product = validLines?.has(lineHash)
        ? (value as Product)
        : parseLine(ProductSchema, value, file, line, problems);
      const where = `${file}:${line}`;
      if (!product) {
        const id = (value as { id?: unknown } | null)?.id;
        if (typeof id === "number") invalidProductIds.add(id);
        return;
      }
      const first = productSource.get(product.id);
      if (first) return problems.error(file, line, "id", `duplicate product id ${product.id} (first at ${first})`);
      checkProduct(product, file, line, ctx);
      products.set(product.id, product);
      productSource.set(product.id, where);
      productLines.set(product.id, lineHash);
    });
  }

  const sales: CatalogSale[] = [];
  const saleSource = new Map<string, string>();
  for (const file of saleFiles) {
    await readNdjson(dir, file, problems, (value, line) => {
      const sale = parseLine(SaleSchema, value, file, line, problems);
      if (!sale) return;
      const where = `${file}:${line}`;
      const id = `${sale.store}/${sale.key}`;
      const first = saleSource.get(id);
      if (first)
        return problems.error(
          file,
          line,
          "key",
          `duplicate sale key "${sale.key}" in store ${sale.store} (first at ${first})`,
        );
      saleSource.set(id, where);
      const beginsAt = Date.parse(sale.begins) / 1000;
      const endsAt = sale.ends === undefined ? null : Date.parse(sale.ends) / 1000;
      checkSale(sale, beginsAt, endsAt, file, line, problems, products, invalidProductIds);
      sales.push({ ...sale, beginsAt, endsAt, source: where });
    });
  }

  checkCatalog(sales, products, productSource, problems, options.now ?? Date.now());
  if (problems.errorCount > 0 || !meta) throw new CatalogError(problems);
  return { meta, sales, products, digest, problems, productLines };
}

async function catalogFiles(dir: string): Promise<{ saleFiles: string[]; productFiles: string[] }> {
  const [saleFiles, productFiles] = await Promise.all([
    fg("sales*.ndjson", { cwd: dir, onlyFiles: true }),
    fg("products*.ndjson", { cwd: dir, onlyFiles: true }),
  ]);
  return { saleFiles: saleFiles.sort(), productFiles: productFiles.sort() };
}

/**
 * sha256 over every input file's name and bytes (catalog.json, then products, then sales, in name order): whether a
 * rebuild has anything to do, decided without parsing a line. Missing files hash as absent; the loader reports them.
 */
export async function digestCatalog(dir: string): Promise<string> {
  const digest = createHash("sha256");
  const { saleFiles, productFiles } = await catalogFiles(dir);
  for (const file of [META_FILE, ...productFiles, ...saleFiles]) {
    digest.update(`${file}\0`);
    try {
      // 1 MiB reads: with the default 64 KiB, 272 MB of products took 170-225 ms to hash instead of 130.
      for await (const chunk of createReadStream(join(dir, file), { highWaterMark: 1 << 20 }))
        digest.update(chunk as Buffer);
    } catch {
      digest.update("\u0001missing");
    }
    digest.update("\0");
  }
  return digest.digest("hex");
}

async function loadMeta(dir: string, problems: ProblemList): Promise<CatalogMeta | null> {
  let text: string;
  try {
    text = await readFile(join(dir, META_FILE), "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    problems.error(
      META_FILE,
      0,
      "",
      code === "ENOENT" ? "missing: the catalog directory needs a catalog.json" : `cannot read: ${code ?? String(err)}`,
    );
    return null;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    problems.error(META_FILE, 1, "", `invalid JSON: ${(err as Error).message}`);
    return null;
  }
  return parseLine(CatalogMetaSchema, value, META_FILE, 1, problems);
}

/** Reads one NDJSON file line by line (bounded memory), calling `onValue` per non-blank line. */
async function readNdjson(
  dir: string,
  file: string,
  problems: ProblemList,
  onValue: (value: unknown, line: number, text: string) => void,
): Promise<void> {
  let at = 0;
  try {
    await forEachLine(join(dir, file), (text, line) => {
      at = line;
      const trimmed = line === 1 ? text.replace(/^\uFEFF/, "").trim() : text.trim();
      if (trimmed === "") return;
      let value: unknown;
      try {
        value = JSON.parse(trimmed);
      } catch (err) {
        problems.error(file, line, "", `invalid JSON: ${(err as Error).message}`);
        return;
      }
      onValue(value, line, trimmed);
    });
  } catch (err) {
    problems.error(file, at, "", `cannot read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
}

/** Validates one line against a schema, reporting each issue as `file:line: field: message`. */
function parseLine<S extends z.ZodType>(
  schema: S,
  value: unknown,
  file: string,
  line: number,
  problems: ProblemList,
): z.infer<S> | null {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  for (const issue of result.error.issues) {
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) problems.error(file, line, formatPath([...issue.path, key]), "unknown field");
    } else problems.error(file, line, formatPath(issue.path), issue.message);
  }
  return null;
}

/** `["skus", 2, "sale_price"]` -> `skus[2].sale_price` */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out;
}
