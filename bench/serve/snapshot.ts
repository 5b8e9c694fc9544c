// The benchmark's input: a sample catalog built into a snapshot, a key, and the resources to request.
import { mkdir, open, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { buildSnapshot } from "../../src/build/index.ts";
import { createKey } from "../../src/keys/keys-file.ts";
import { CURRENT_LINK, packPath, ROUTES_FILE, RoutesSchema } from "../../src/snapshot/format.ts";
import type { Routes } from "../../src/snapshot/format.ts";
import { writeFallbackCatalog } from "./fallback-catalog.ts";

/** The size of product detail the benchmark looks for (bytes): a typical one. */
const PRODUCT_TARGET_BYTES = 3 * 1024;
/** The all-stores list of active sales. */
export const SALE_LIST_PATH = "/v1/sales/active.json";

export interface BenchSnapshot {
  dataDir: string;
  keysFile: string;
  key: string;
  /** How the catalog was made, for the report. */
  catalogNote: string;
  buildMs: number;
  /**
   * The product detail benchmarked, its bytes read from the snapshot's pack, and the same bytes as static files
   * (`<hash>.json`, `<hash>.json.br` under `staticDir`) for serve-handler: the snapshot keeps bodies in packs.
   */
  product: {
    path: string;
    identity: Buffer;
    br: Buffer | null;
    staticDir: string;
    file: string;
    brFile: string | null;
  };
  list: { path: string; sales: number; size: number; stableForSec: number | null };
}

type SampleWriter = (dir: string, options: { seed?: number; products?: number; now?: Date }) => Promise<unknown>;

/** The sample generator, if it is there and exports writeSampleCatalog (it is optional for the benchmark). */
async function loadSampleWriter(): Promise<SampleWriter | string> {
  const url = pathToFileURL(join(import.meta.dirname, "..", "..", "src", "catalog", "sample", "index.ts")).href;
  try {
    const mod = (await import(url)) as { writeSampleCatalog?: unknown };
    if (typeof mod.writeSampleCatalog !== "function") return "src/catalog/sample/index.ts has no writeSampleCatalog";
    return mod.writeSampleCatalog as SampleWriter;
  } catch (err) {
    return `src/catalog/sample/index.ts cannot be loaded (${(err as Error).message.split("\n")[0]})`;
  }
}

/** The segment in force at `now`, if any. */
function current<T>(segments: readonly [number | null, number | null, T][], now: number) {
  return segments.find(([from, to]) => (from === null || from <= now) && (to === null || now < to));
}

/** Longest wait for a sale boundary to pass before measuring (the sample's sales begin on the hour). */
const MAX_BOUNDARY_WAIT_SEC = 10 * 60;

export interface PrepareOptions {
  baseUrl: string;
  products?: number;
  seed?: number;
  /** Seconds the sale list must stay unchanged (the run's length): if it changes sooner, wait until it has. */
  stableFor?: number;
  /** Progress messages. */
  log?: (message: string) => void;
}

/** Writes the catalog, builds and publishes the snapshot, and makes an unthrottled key. */
export async function prepareSnapshot(workDir: string, options: PrepareOptions): Promise<BenchSnapshot> {
  const catalogDir = join(workDir, "catalog");
  const dataDir = join(workDir, "data");
  const keysFile = join(workDir, "keys.json");
  const now = new Date();

  let catalogNote: string;
  const writer = await loadSampleWriter();
  if (typeof writer === "function") {
    try {
      await writer(catalogDir, {
        seed: options.seed ?? 1,
        now,
        ...(options.products ? { products: options.products } : {}),
      });
      catalogNote = `sample catalog (writeSampleCatalog, seed ${options.seed ?? 1}${options.products ? `, ${options.products} products` : ", default scale"})`;
    } catch (err) {
      await writeFallbackCatalog(catalogDir, now, options.products);
      catalogNote = `FALLBACK fixture catalog (writeSampleCatalog failed: ${(err as Error).message.split("\n")[0]})`;
    }
  } else {
    await writeFallbackCatalog(catalogDir, now, options.products);
    catalogNote = `FALLBACK fixture catalog scaled up (${writer})`;
  }

  const started = performance.now();
  await buildSnapshot({ catalogDir, dataDir, baseUrl: options.baseUrl, source: "bench", force: true });
  const buildMs = performance.now() - started;
  // Benchmark traffic is far above any real key's rate: the limiter still runs on every request, it just never says no.
  const key = await createKey(keysFile, "bench", new Date(), { rate: 1e9, burst: 1e9 });

  const routes: Routes = RoutesSchema.parse(
    JSON.parse(await readFile(join(dataDir, CURRENT_LINK, ROUTES_FILE), "utf8")),
  );
  // The handler picks the list by its clock: a sale beginning or ending mid-run would change the body measured.
  const waitUntil = Date.now() + MAX_BOUNDARY_WAIT_SEC * 1000;
  let list = describeList(routes, Math.floor(Date.now() / 1000));
  while (
    options.stableFor &&
    list.stableForSec !== null &&
    list.stableForSec < options.stableFor &&
    Date.now() < waitUntil
  ) {
    options.log?.(
      `${SALE_LIST_PATH} changes in ${list.stableForSec} s (a sale begins or ends): waiting for that to pass before measuring`,
    );
    await new Promise((resolve) => setTimeout(resolve, (list.stableForSec! + 1) * 1000));
    list = describeList(routes, Math.floor(Date.now() / 1000));
  }
  const product = await extractProduct(
    routes,
    dataDir,
    pickProduct(routes, Math.floor(Date.now() / 1000)),
    join(workDir, "static"),
  );
  return { dataDir, keysFile, key, catalogNote, buildMs, product, list };
}

/** Reads a blob's identity and brotli bytes from its pack and writes them as files for serve-handler. */
async function extractProduct(
  routes: Routes,
  dataDir: string,
  picked: { path: string; blob: Routes["blobs"][number] },
  staticDir: string,
): Promise<BenchSnapshot["product"]> {
  const [hash, size, gzSize, brSize, , packNo, offset] = picked.blob;
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
    const br = brSize ? await read(offset + size + gzSize, brSize) : null;
    const dir = join(staticDir, hash.slice(0, 2));
    await mkdir(dir, { recursive: true });
    const file = join(dir, `${hash}.json`);
    await writeFile(file, identity);
    if (br) await writeFile(`${file}.br`, br);
    return { path: picked.path, identity, br, staticDir, file, brFile: br ? `${file}.br` : null };
  } finally {
    await handle.close();
  }
}

/** The product detail on sale now (and for the next hour) whose size is closest to PRODUCT_TARGET_BYTES. */
function pickProduct(routes: Routes, now: number): { path: string; blob: Routes["blobs"][number] } {
  let best: { path: string; blob: Routes["blobs"][number] } | null = null;
  for (const [path, segments] of Object.entries(routes.resources)) {
    if (!/^\/v1\/products\/\d+\/detail\.json$/.test(path)) continue;
    const seg = current(segments, now);
    if (!seg || typeof seg[2] !== "number" || (seg[1] !== null && seg[1] < now + 3600)) continue;
    const blob = routes.blobs[seg[2]];
    if (!blob || blob[3] === 0) continue;
    if (!best || Math.abs(blob[1] - PRODUCT_TARGET_BYTES) < Math.abs(best.blob[1] - PRODUCT_TARGET_BYTES))
      best = { path, blob };
  }
  if (!best)
    throw new Error("the snapshot has no product detail that is on sale now for the next hour (with a brotli variant)");
  return best;
}

function describeList(routes: Routes, now: number): BenchSnapshot["list"] {
  const segments = routes.resources[SALE_LIST_PATH];
  const seg = segments && current(segments, now);
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
