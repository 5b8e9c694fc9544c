// The benchmarks' input: the sample catalog built into a snapshot, an unthrottled key, and the resources to request.
import { mkdir, open, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { buildSnapshot } from "../../src/generate/index.ts";
import { DEFAULT_SAMPLE_PRODUCTS, writeSampleCatalog } from "../../src/catalog/sample/index.ts";
import { createKey } from "../../src/keys/keys-file.ts";
import { CURRENT_LINK, packPath, ROUTES_FILE, RoutesSchema } from "../../src/snapshot/format.ts";
import type { Routes } from "../../src/snapshot/format.ts";

/** The size of product detail the benchmark looks for (bytes): a typical one. */
const PRODUCT_TARGET_BYTES = 3 * 1024;
/** The all-stores list of active sales. */
const SALE_LIST_PATH = "/v1/sales/active.json";
/** Longest wait for a sale boundary to pass before measuring (the sample's sales begin on the hour). */
const MAX_BOUNDARY_WAIT_SEC = 10 * 60;

export interface BenchSnapshot {
  dataDir: string;
  keysFile: string;
  key: string;
  /** How the catalog was made, for the report. */
  catalogNote: string;
  buildMs: number;
  /**
   * The product detail benchmarked (on sale for the next hour, the closest to 3 KB), its bytes read from the
   * snapshot's pack, and the same bytes as `<staticDir>/<file>` and `<file>.br` for serve-handler.
   */
  product: { path: string; identity: Buffer; br: Buffer; staticDir: string; file: string };
  /** The list of active sales: its sales, its size and how long it stays as it is (null: until the catalog changes). */
  list: { path: string; sales: number; size: number; stableForSec: number | null };
}

export interface PrepareOptions {
  /** The API base URL the snapshot's links are written with. */
  baseUrl: string;
  /** Sample products. Default DEFAULT_SAMPLE_PRODUCTS (6,000). */
  products?: number;
  /** Sample seed. Default 1. */
  seed?: number;
  /** Seconds the sale list must stay unchanged (the run's length): if it changes sooner, wait until it has. */
  stableFor?: number;
  /** Progress messages. */
  log?: (message: string) => void;
  /** Changes the sample catalog (its directory) before it is built, e.g. adds a sale. Default none. */
  edit?: (catalogDir: string) => Promise<void>;
}

type Segment = Routes["resources"][string][number];

/** The segment in force at `now`, if any. */
const current = (segments: readonly Segment[] | undefined, now: number) =>
  segments?.find(([from, to]) => (from === null || from <= now) && (to === null || now < to));

/** Writes the sample catalog, builds and publishes the snapshot, and makes a key whose limit never bites. */
export async function prepareSnapshot(workDir: string, options: PrepareOptions): Promise<BenchSnapshot> {
  const catalogDir = join(workDir, "catalog");
  const dataDir = join(workDir, "data");
  const keysFile = join(workDir, "keys.json");
  const seed = options.seed ?? 1;
  await writeSampleCatalog(catalogDir, {
    seed,
    now: new Date(),
    products: options.products ?? DEFAULT_SAMPLE_PRODUCTS,
  });
  await options.edit?.(catalogDir);
  const catalogNote = `sample catalog (writeSampleCatalog, seed ${seed}, ${options.products ?? `${DEFAULT_SAMPLE_PRODUCTS} (default)`} products)`;
  const started = performance.now();
  await buildSnapshot({ catalogDir, dataDir, baseUrl: options.baseUrl, source: "bench", force: true });
  const buildMs = performance.now() - started;
  // Benchmark traffic is far above any real key's rate: the limiter still runs on every request, it just never says no.
  const key = await createKey(keysFile, "bench", new Date(), { rate: 1e9, burst: 1e9 });

  const routes = RoutesSchema.parse(JSON.parse(await readFile(join(dataDir, CURRENT_LINK, ROUTES_FILE), "utf8")));
  // The handler picks the list by its clock: a sale beginning or ending mid-run would change the body measured.
  const waitUntil = Date.now() + MAX_BOUNDARY_WAIT_SEC * 1000;
  let list = describeList(routes);
  while (
    options.stableFor &&
    list.stableForSec !== null &&
    list.stableForSec < options.stableFor &&
    Date.now() < waitUntil
  ) {
    options.log?.(
      `${SALE_LIST_PATH} changes in ${list.stableForSec} s (a sale begins or ends): waiting for that to pass`,
    );
    await new Promise((resolve) => setTimeout(resolve, (list.stableForSec! + 1) * 1000));
    list = describeList(routes);
  }
  const product = await extractProduct(routes, dataDir, join(workDir, "static"));
  return { dataDir, keysFile, key, catalogNote, buildMs, product, list };
}

/** Picks the product, reads its identity and brotli bytes from its pack and writes them as files for serve-handler. */
async function extractProduct(routes: Routes, dataDir: string, staticDir: string): Promise<BenchSnapshot["product"]> {
  const now = Math.floor(Date.now() / 1000);
  let best: { path: string; blob: Routes["blobs"][number] } | null = null;
  for (const [path, segments] of Object.entries(routes.resources)) {
    const seg = /^\/v1\/products\/\d+\/detail\.json$/.test(path) ? current(segments, now) : undefined;
    if (!seg || typeof seg[2] !== "number" || (seg[1] !== null && seg[1] < now + 3600)) continue;
    const blob = routes.blobs[seg[2]];
    if (
      blob &&
      blob[3] > 0 &&
      (!best || Math.abs(blob[1] - PRODUCT_TARGET_BYTES) < Math.abs(best.blob[1] - PRODUCT_TARGET_BYTES))
    )
      best = { path, blob };
  }
  if (!best)
    throw new Error("the snapshot has no product detail on sale now for the next hour (with a brotli variant)");
  const [hash, size, gzSize, brSize, , packNo, offset] = best.blob;
  const pack = routes.packs[packNo];
  if (!pack) throw new Error(`routes.json: blob ${hash} is in pack ${packNo}, which is not listed`);
  const handle = await open(join(dataDir, packPath(pack[0])), "r");
  const read = async (at: number, n: number) => {
    const buf = Buffer.alloc(n);
    const { bytesRead } = await handle.read(buf, 0, n, at);
    if (bytesRead !== n) throw new Error(`pack ${pack[0]}: short read at ${at}`);
    return buf;
  };
  try {
    const identity = await read(offset, size);
    const br = await read(offset + size + gzSize, brSize);
    const file = join(staticDir, hash.slice(0, 2), `${hash}.json`);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, identity);
    await writeFile(`${file}.br`, br);
    return { path: best.path, identity, br, staticDir, file };
  } finally {
    await handle.close();
  }
}

function describeList(routes: Routes): BenchSnapshot["list"] {
  const now = Math.floor(Date.now() / 1000);
  const seg = current(routes.resources[SALE_LIST_PATH], now);
  if (!seg) throw new Error(`the snapshot has no ${SALE_LIST_PATH} in force now`);
  const body = seg[2];
  const parts = typeof body === "number" ? [body] : body.sales;
  if (parts.length === 0) throw new Error(`${SALE_LIST_PATH} is empty now: no active sales to benchmark`);
  const size =
    typeof body === "number"
      ? routes.blobs[body]![1]
      : parts.reduce((sum, i) => sum + routes.blobs[i]![1], 0) + parts.length - 1 + '{"sales":[]}'.length;
  return { path: SALE_LIST_PATH, sales: parts.length, size, stableForSec: seg[1] === null ? null : seg[1] - now };
}
