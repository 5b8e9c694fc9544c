// For the attack scripts: a sample snapshot in a temp dir, and the real server (`src/cli/serve.ts`) in a child process.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { buildSnapshot } from "../../src/generate/index.ts";
import { writeSampleCatalog } from "../../src/catalog/sample/index.ts";
import { createKey } from "../../src/keys/keys-file.ts";
import { SERVER_NODE_FLAGS } from "../../src/serve/http/server.ts";
import { spawnReady } from "./spawn-ready.ts";
import type { ReadyChild } from "./spawn-ready.ts";

const ROOT = resolve(fileURLToPath(new URL("../..", import.meta.url)));
export const HOST = "127.0.0.1";

/** A port that was free a moment ago on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, HOST, () => {
      const address = s.address();
      const port = typeof address === "object" && address ? address.port : 0;
      s.close(() => resolvePort(port));
    });
  });
}

export interface PreparedData {
  root: string;
  dataDir: string;
  keysFile: string;
  /** A key without a rate limit, so that the attack measures the server, not the limiter. */
  key: string;
  /** Every resource path of the snapshot (`/v1/...`). */
  paths: string[];
  /** Words of product names and brands, size keys: material for search queries. */
  words: string[];
  brands: string[];
  sizeKeys: string[];
  cleanup(): Promise<void>;
}

/** Writes the sample catalog (`products`, `seed`, now), builds it for `http://127.0.0.1:<port>`, and makes a key. */
export async function prepareData(options: { products: number; seed: number; port: number }): Promise<PreparedData> {
  const root = await mkdtemp(join(tmpdir(), "fsa-attack-"));
  const catalogDir = join(root, "catalog");
  const dataDir = join(root, "data");
  const keysFile = join(root, "keys.json");
  await writeSampleCatalog(catalogDir, { products: options.products, seed: options.seed, now: new Date() });
  await buildSnapshot({ catalogDir, dataDir, baseUrl: `http://${HOST}:${options.port}` });
  const key = await createKey(keysFile, "attack", new Date(), { rate: 1e9, burst: 1e9 });
  const routes = JSON.parse(await readFile(join(dataDir, "current", "routes.json"), "utf8")) as {
    resources: Record<string, unknown>;
  };
  const words = new Set<string>();
  const brands = new Set<string>();
  const sizeKeys = new Set<string>();
  const lines = (await readFile(join(catalogDir, "products.ndjson"), "utf8")).split("\n").filter(Boolean);
  for (const line of lines.slice(0, 1000)) {
    const p = JSON.parse(line) as { name: string; brand: string; skus: Array<{ size_key?: string }> };
    for (const w of p.name.split(/\s+/)) if (/^[A-Za-z]{3,}$/.test(w)) words.add(w.toLowerCase());
    brands.add(p.brand);
    for (const s of p.skus) if (s.size_key) sizeKeys.add(s.size_key);
  }
  return {
    root,
    dataDir,
    keysFile,
    key,
    paths: Object.keys(routes.resources).sort(),
    words: [...words].sort(),
    brands: [...brands].sort(),
    sizeKeys: [...sizeKeys].sort(),
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}

/** The line `src/cli/serve.ts` writes on stderr once it listens on `host`; its first group is the port. */
export function serveListening(host: string): RegExp {
  return new RegExp(`listening on http://${host.replace(/[.[\]:]/g, "\\$&")}:(\\d+)`);
}

/** Starts `src/cli/serve.ts` under node (one process, so `pid` is the server's own) and waits until it listens. */
export function startServerChild(options: {
  dataDir: string;
  keysFile: string;
  port: number;
  env?: Record<string, string>;
}): Promise<ReadyChild> {
  return spawnReady({
    name: "server",
    script: "src/cli/serve.ts",
    cwd: ROOT,
    nodeArgs: SERVER_NODE_FLAGS,
    env: {
      ...process.env,
      HOST,
      PORT: String(options.port),
      DATA_DIR: options.dataDir,
      KEYS_FILE: options.keysFile,
      LOG_REQUESTS: "0",
      // Given, not inherited: vitest sets BASE_URL to "/" in its own environment.
      BASE_URL: `http://${HOST}:${options.port}`,
      ...options.env,
    },
    core: null,
    ready: { stream: "stderr", pattern: serveListening(HOST) },
    stdout: "ignore",
    stopGraceMs: 15_000,
    keepStderr: Infinity,
  });
}

/** The q-th quantile (0..1) of sorted numbers. */
export function quantile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}
