// Test fixtures: a small hand-made catalog with known instants, built into a real snapshot in a temp dir and served on port 0.
import { spawn } from "node:child_process";
import type { ChildProcess, StdioOptions } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile, mkdir } from "node:fs/promises";
import { once } from "node:events";
import { createServer } from "node:net";
import { randomInt } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildSnapshot } from "../../src/generate/index.ts";
import type { Product, Sale } from "../../src/catalog/schema.ts";
import { createKey } from "../../src/keys/keys-file.ts";
import { createHandler } from "../../src/serve/handler.ts";
import type { Handler, HandlerOptions } from "../../src/serve/handler.ts";
import { SERVER_NODE_FLAGS, startServer } from "../../src/serve/http/server.ts";
import type { RunningServer } from "../../src/serve/http/server.ts";
import { checkedFetch } from "./check-body.ts";

export const SITE = "https://www.example-retailer.com";
export const BASE = "https://api.example.test";
/** 2026-11-22T17:00:00Z: the instant the fixture's main sale begins. */
export const T0 = Date.parse("2026-11-22T17:00:00Z") / 1000;
export const iso = (s: number) => new Date(s * 1000).toISOString().replace(".000Z", "Z");
const H = 3600;
export const D = 24 * H;

export function sku(id: number, over: Partial<Product["skus"][number]> = {}): Product["skus"][number] {
  return {
    id,
    inventory_status: "for sale",
    msrp_price: "120.00",
    sale_price: "59.00",
    color: "Navy",
    color_group: "blue",
    size: "8.5",
    size_group: "Women's Shoes",
    size_key: "WoSh:8.5",
    ...over,
  };
}

export function product(id: number, over: Partial<Product> = {}): Product {
  return {
    id,
    name: `Leather Ankle Boot ${id}`,
    brand: "Acme Shoes",
    page_path: `/product/${id}-boot`,
    content: { description: "A sturdy leather boot. Goes with everything.", material: "Leather" },
    categories: ["Boots", "Shoes"],
    images: [
      { url: `https://cdn.example-retailer.com/${id}-300x400.jpg`, width: 300, height: 400 },
      { url: `https://cdn.example-retailer.com/${id}-91x121.jpg`, width: 91, height: 121 },
    ],
    skus: [
      sku(id * 10 + 1),
      sku(id * 10 + 2, { size: "9", size_key: "WoSh:9", inventory_status: "sold out", shipping_surcharge: "5.00" }),
    ],
    ...over,
  };
}

export function sale(key: string, over: Partial<Sale> = {}): Sale {
  return {
    key,
    store: "women",
    name: `Sale ${key}`,
    description: "Great things.",
    begins: iso(T0),
    ends: iso(T0 + 2 * D),
    images: [{ url: `https://cdn.example-retailer.com/sale-${key}.jpg`, width: 600, height: 300 }],
    product_ids: [],
    ...over,
  };
}

/** The standard fixture: one sale beginning at T0, one upcoming, one open-ended, one already ended at T0, one empty upcoming. */
export function standardCatalog(): { sales: Sale[]; products: Product[] } {
  return {
    products: [
      product(1),
      product(2, {
        name: "Suede Chelsea Boot",
        brand: "Calvin Klein",
        content: { description: "Soft suede." },
        categories: ["Boots"],
      }),
      product(3, {
        name: "Silk Wrap Dress",
        categories: ["Dresses"],
        skus: [
          sku(31, {
            size: "S",
            size_group: "Women's Apparel",
            size_key: "WoAp:S",
            color: "Black",
            color_group: "black",
          }),
        ],
      }),
      product(4, {
        name: "Wool Overcoat",
        categories: ["Coats"],
        skus: [sku(41, { size: "M", size_group: "Men's Apparel", size_key: "MeAp:M" })],
      }),
      product(5, {
        name: "Kids Rain Boot",
        gender: "girl",
        categories: ["Kids Shoes"],
        skus: [sku(51, { size: "13", size_group: "Kids' Shoes", size_key: "KiSh:13" })],
      }),
      product(6, {
        name: "Orphan Lamp",
        categories: ["Lighting"],
        skus: [
          sku(61, {
            size: undefined,
            size_group: undefined,
            size_key: undefined,
            color: undefined,
            color_group: undefined,
          }),
        ],
      }),
    ],
    sales: [
      sale("boots", { product_ids: [1, 2] }),
      sale("dresses", { begins: iso(T0 + D), ends: iso(T0 + 3 * D), product_ids: [3] }),
      sale("coats", { store: "men", begins: iso(T0 - D), ends: undefined, product_ids: [4] }),
      sale("rainy", { store: "kids", begins: iso(T0 - 2 * D), ends: iso(T0), product_ids: [5] }),
      sale("soon", { store: "home", begins: iso(T0 + 2 * H), ends: iso(T0 + 5 * H), product_ids: [] }),
    ],
  };
}

/** Where test builds keep rendered reference pages by digest, so the suite renders each distinct page once. */
export const DOCS_CACHE = join(tmpdir(), "flash-sale-api-test-docs");

/**
 * A new directory under the system's temp directory, removed after the test file that made it (test/setup.ts):
 * left behind, a day of runs filled /tmp with thousands of them, Varnish's work directories 81 MB each.
 */
export async function tempDir(prefix = "fsa-"): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  madeTempDirs().push(dir);
  return dir;
}

/** The directories tempDir made in this test file (a global, so that the setup file needs no import of this one). */
function madeTempDirs(): string[] {
  const g = globalThis as { [TEMP_DIRS]?: string[] };
  return (g[TEMP_DIRS] ??= []);
}
const TEMP_DIRS = Symbol.for("flash-sale-api.testTempDirs");

/** Writes a catalog directory; `raw` lets a test write exact lines (for bad-input tests). */
export async function writeCatalog(
  dir: string,
  catalog: { sales: unknown[]; products: unknown[] },
  raw: { sales?: string; products?: string; meta?: string } = {},
): Promise<string> {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, "catalog.json"), raw.meta ?? JSON.stringify({ format: 1, site_url: SITE }));
  await writeFile(
    join(dir, "sales.ndjson"),
    raw.sales ?? catalog.sales.map((s) => JSON.stringify(s)).join("\n") + "\n",
  );
  await writeFile(
    join(dir, "products.ndjson"),
    raw.products ?? catalog.products.map((p) => JSON.stringify(p)).join("\n") + "\n",
  );
  return dir;
}

/**
 * Builds the standard catalog (written to `<root>/catalog`) into `dataDir`: the snapshot most tests that start a
 * server of their own serve.
 */
export async function buildStandardSnapshot(root: string, dataDir: string): Promise<void> {
  await buildSnapshot({
    catalogDir: await writeCatalog(join(root, "catalog"), standardCatalog()),
    dataDir,
    baseUrl: BASE,
  });
}

export interface TestApi {
  url: string;
  key: string;
  dataDir: string;
  keysFile: string;
  handler: Handler;
  server: RunningServer;
  /** The injected clock, epoch seconds; set it to move time. */
  clock: { now: number };
  /** fetch of `url + path`; the body of every /v1/ response is checked against its schema (check-body.ts). */
  get(path: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

/**
 * Builds `catalog` into a temp data dir, makes a key, and serves it on 127.0.0.1:0 with an injected clock. With
 * `portalUrl`, the reference page links to a developer portal there (rendered anew: such a page, whose portal's port
 * changes from run to run, is not worth keeping in DOCS_CACHE).
 */
export async function startTestApi(
  catalog = standardCatalog(),
  { portalUrl, ...options }: Partial<HandlerOptions> & { portalUrl?: string } = {},
): Promise<TestApi> {
  const root = await tempDir();
  const catalogDir = await writeCatalog(join(root, "catalog"), catalog);
  const dataDir = join(root, "data");
  const keysFile = join(root, "keys.json");
  await buildSnapshot({
    catalogDir,
    dataDir,
    baseUrl: BASE,
    portalUrl,
    docsCacheDir: portalUrl ? undefined : DOCS_CACHE,
  });
  // The test key is not rate-limited (the clock stands still in most tests, so no bucket would refill).
  const key = await createKey(keysFile, "test", new Date(), { rate: 1e9, burst: 1e9 });
  const clock = { now: T0 };
  const handler = await createHandler({
    dataDir,
    keysFile,
    clock: () => clock.now * 1000,
    // Room for the many bad keys suites send from 127.0.0.1; test/serve/admission/rate-limit.test.ts sets the real default.
    authFailureLimit: { rate: 1, burst: 10_000 },
    ...options,
  });
  const server = await startServer(handler, "127.0.0.1", 0);
  const url = `http://127.0.0.1:${server.port}`;
  return {
    url,
    key,
    dataDir,
    keysFile,
    handler,
    server,
    clock,
    get: (path, init) => checkedFetch(url + path, init),
    close: async () => {
      await server.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}

/**
 * Version k of the standard catalog: every sale and product name carries `v<k>`, and `fillers` big products (IDs
 * from 1000, in the boots sale) make the snapshot weigh a few MB: for tests that publish snapshot after snapshot.
 */
export function catalogVersion(k: number, fillers: number) {
  const c = standardCatalog();
  const extra = Array.from({ length: fillers }, (_, i) =>
    product(1000 + i, { name: `Filler ${i} v${k}`, content: { description: `Version ${k}. `.repeat(200) } }),
  );
  c.products = c.products.map((p) => ({ ...p, name: `${p.name} v${k}` })).concat(extra);
  c.sales = c.sales.map((s) => ({
    ...s,
    name: `Sale ${s.key} v${k}`,
    product_ids: s.key === "boots" ? [...s.product_ids, ...extra.map((p) => p.id)] : s.product_ids,
  }));
  return c;
}

/**
 * `count` clients asking `api` for the sale list and filler product 0 of catalogVersion over and over, until
 * `stop()`: each answer must be a 200 naming one version only (`failures` says otherwise); `seen` holds the versions.
 */
export function versionClients(api: TestApi, count = 3) {
  const state = { failures: [] as string[], seen: new Set<string>(), requests: 0 };
  let done = false;
  const client = async () => {
    while (!done) {
      const [list, detail] = await Promise.all([
        api.get(withKey(api, "/v1/sales/active.json")),
        api.get(withKey(api, "/v1/products/1000/detail.json")),
      ]);
      state.requests += 2;
      if (list.status !== 200 || detail.status !== 200) state.failures.push(`status ${list.status}/${detail.status}`);
      const versions = new Set(
        ((await list.json()) as { sales: { name: string }[] }).sales.map((s) => s.name.split(" ").pop()),
      );
      if (versions.size !== 1) state.failures.push(`one list mixes ${[...versions].join(", ")}`);
      state.seen.add([...versions][0]!);
      const name = ((await detail.json()) as { name: string }).name;
      if (!/^Filler 0 v\d+$/.test(name)) state.failures.push(`detail ${name}`);
    }
  };
  const clients = Array.from({ length: count }, client);
  return Object.assign(state, {
    async stop(): Promise<void> {
      done = true;
      await Promise.all(clients);
    },
  });
}

/**
 * `npm run serve` as a child process (src/cli/serve.ts with the server's node options, from the repository root): on
 * a port of its own choosing on 127.0.0.1, links under BASE; `env` adds to or overrides that (DATA_DIR, KEYS_FILE...).
 */
export function spawnServe(env: Record<string, string>, stdio: StdioOptions): ChildProcess {
  return spawn(process.execPath, [...SERVER_NODE_FLAGS, "--import", "tsx", "src/cli/serve.ts"], {
    cwd: fileURLToPath(new URL("../..", import.meta.url)),
    env: { ...process.env, PORT: "0", HOST: "127.0.0.1", BASE_URL: BASE, ...env },
    stdio,
  });
}

/**
 * A loopback port nothing listens on, for a server the test starts outside this process (Redis, PostgreSQL, nginx...)
 * or for a test of a server that is not there. It lies below the kernel's range for port 0, where every server of a
 * test that listens in this process gets its port: a port from that range, free a moment ago, could go to the next
 * such server of a test running meanwhile (CI's nginx test once got a 504 from one that hung instead of the 502 of a
 * refused connection). This one was free to listen on (bound, then closed) when returned.
 */
export async function freePort(): Promise<number> {
  const [low] = (await readFile("/proc/sys/net/ipv4/ip_local_port_range", "utf8")).trim().split(/\s+/).map(Number);
  for (let tries = 0; tries < 100; tries++) {
    const port = randomInt(10_000, Math.max(low!, 10_001));
    const server = createServer();
    const bound = await new Promise<boolean>((resolve) => {
      server.once("error", () => resolve(false));
      server.listen(port, "127.0.0.1", () => resolve(true));
    });
    if (!bound) continue;
    server.close();
    await once(server, "close");
    return port;
  }
  throw new Error("freePort: no port below the kernel's range for port 0 was free in 100 tries");
}

/** Appends the key (and any other parameters) to a path. */
export function withKey(api: TestApi, path: string, params = ""): string {
  return `${path}${path.includes("?") ? "&" : "?"}apikey=${api.key}${params ? `&${params}` : ""}`;
}
