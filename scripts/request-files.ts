// `npm run request-files`: the files of src/ a request crosses, measured by V8 (precise coverage, call counts) in the
// server as `npm start` runs it: src/cli/serve.ts in its own process, with request logs and usage metering on.
//
//   tsx scripts/request-files.ts [--repeat 200] [--products 300] [--functions]
//
// It builds a sample snapshot in a temp dir, starts the server (scripts/lib/coverage-child.ts) and, after warm-up
// requests (with `Accept-Encoding: gzip, deflate, br`, as browsers send), measures four windows: --repeat identical
// requests for one product's detail, the first request for another product (cold), one search, and a window of the
// same length with no request at all. A function of src/
// counts for a window's requests when it was called at least once per request more than in the idle window; what
// ran in the idle window, or not in proportion to the requests (timers: the request log's and the meter's flushes),
// is listed apart as background. --functions lists each file's functions too.
//
// Why a child process with node:inspector inside it, not the inspector protocol over a socket: the server runs as
// deployed (its own process, flags and event loop; the client's code never runs there), and node 20 has no
// WebSocket client to speak the protocol with.
import { once } from "node:events";
import { readFile } from "node:fs/promises";
import { Agent, request } from "node:http";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { SERVER_NODE_FLAGS } from "../src/serve/http/server.ts";
import { CURRENT_LINK, ROUTES_FILE } from "../src/snapshot/format.ts";
import type { FileCounts } from "./lib/coverage-child.ts";
import { freePort, HOST, prepareData, serveListening } from "./lib/server-child.ts";
import { spawnReady } from "./lib/spawn-ready.ts";
import type { ReadyChild } from "./lib/spawn-ready.ts";

const ROOT = resolve(fileURLToPath(new URL("..", import.meta.url)));
/** Requests for the repeated product before anything is measured: caches filled, code compiled. */
const WARMUP = 50;
/**
 * Shortest measured window (ms): longer than the meter's hand-over period (USAGE_FLUSH_MS, 5 s by default), so that
 * every window, the idle one too, holds its timers and they can be told apart from the requests.
 */
const MIN_WINDOW_MS = 6000;

const { values: args } = parseArgs({
  options: {
    repeat: { type: "string", default: "200" },
    products: { type: "string", default: "300" },
    functions: { type: "boolean", default: false },
  },
});
const repeat = Number(args.repeat);

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

/** What a browser or a CDN sends: the server negotiates the encoding on every request. */
const HEADERS = { "accept-encoding": "gzip, deflate, br" };

/** One GET on the kept-alive connection; resolves with the status once the body is read. */
function get(port: number, path: string): Promise<number> {
  return new Promise((done, fail) => {
    const req = request({ host: HOST, port, path, agent, headers: HEADERS }, (res) => {
      res.resume();
      res.once("end", () => done(res.statusCode ?? 0));
    });
    req.once("error", fail);
    req.end();
  });
}

/** The server's call counts since the last take. */
async function take(server: ReadyChild): Promise<FileCounts[]> {
  server.child.send("take");
  const [reply] = (await once(server.child, "message")) as [{ files: FileCounts[] }];
  return reply.files;
}

/** Counts of a window: its paths sent one after another, then quiet until at least MIN_WINDOW_MS has passed. */
async function measure(server: ReadyChild, paths: readonly string[]) {
  await take(server);
  const start = performance.now();
  for (const path of paths) {
    const status = await get(server.port, path);
    if (status !== 200) throw new Error(`${path} answered ${status}`);
  }
  const left = MIN_WINDOW_MS - (performance.now() - start);
  if (left > 0) await new Promise((r) => setTimeout(r, left));
  return take(server);
}

/** Product detail paths whose body is in force now and for the next ten minutes (routes.json's segments). */
async function onSaleNow(dataDir: string): Promise<string[]> {
  const routes = JSON.parse(await readFile(join(dataDir, CURRENT_LINK, ROUTES_FILE), "utf8")) as {
    resources: Record<string, Array<[number | null, number | null, unknown]>>;
  };
  const now = Date.now() / 1000;
  const inForce = ([from, to]: [number | null, number | null, unknown]) =>
    (from === null || from <= now) && (to === null || to > now + 600);
  return Object.entries(routes.resources)
    .filter(([path, segments]) => /^\/v1\/products\/[^/]+\/detail\.json$/.test(path) && segments.some(inForce))
    .map(([path]) => path)
    .sort();
}

const key = (file: string, offset: number) => `${file}:${offset}`;

interface Row {
  file: string;
  /** Calls per request. */
  calls: number;
  functions: Array<{ name: string; calls: number }>;
}

/** A window's files split into the request path (per request, beyond the idle window) and the background. */
function split(window: FileCounts[], idle: Map<string, number>, requests: number) {
  const path: Row[] = [];
  const background = new Map<string, Row>();
  for (const { file, functions } of window) {
    const row: Row = { file, calls: 0, functions: [] };
    for (const f of functions) {
      const extra = f.count - (idle.get(key(file, f.offset)) ?? 0);
      if (extra >= requests && (requests === 1 || extra % requests === 0)) {
        row.calls += extra / requests;
        row.functions.push({ name: f.name, calls: extra / requests });
      } else {
        const bg = background.get(file) ?? { file, calls: 0, functions: [] };
        bg.calls += f.count;
        bg.functions.push({ name: f.name, calls: f.count });
        background.set(file, bg);
      }
    }
    if (row.functions.length) path.push(row);
  }
  return { path: path.sort((a, b) => a.file.localeCompare(b.file)), background: [...background.values()] };
}

function print(title: string, rows: Row[], unit: string): void {
  const log = (line: string) => process.stdout.write(line + "\n");
  log(`\n${title}: ${rows.length} file(s)`);
  const width = Math.max(20, ...rows.map((r) => r.file.length));
  log(`  ${"file".padEnd(width)}  functions  ${unit}`);
  for (const r of rows) {
    log(`  ${r.file.padEnd(width)}  ${String(r.functions.length).padStart(9)}  ${String(r.calls).padStart(5)}`);
    if (args.functions) for (const f of r.functions) log(`      ${f.name} ${f.calls}`);
  }
}

const port = await freePort();
const data = await prepareData({ products: Number(args.products), seed: 1, port });
let server: ReadyChild | null = null;
try {
  server = await spawnReady({
    name: "server",
    script: join("scripts", "lib", "coverage-child.ts"),
    cwd: ROOT,
    nodeArgs: SERVER_NODE_FLAGS,
    // `npm start`'s configuration: one process, request logs and usage metering on (into <DATA_DIR>/portal.db).
    env: {
      ...process.env,
      NODE_ENV: "production",
      HOST,
      PORT: String(port),
      DATA_DIR: data.dataDir,
      KEYS_FILE: data.keysFile,
      BASE_URL: `http://${HOST}:${port}`,
      LOG_REQUESTS: "1",
      USAGE: "1",
      WORKERS: "1",
    },
    core: null,
    ready: { stream: "stderr", pattern: serveListening(HOST) },
    stdout: "ignore", // the request log: written, not read
    ipc: true,
    stopGraceMs: 15_000,
  });
  const products = await onSaleNow(data.dataDir);
  if (products.length < 3)
    throw new Error("the sample snapshot has fewer than 3 products on sale for the next minutes");
  const withKey = (path: string) => `${path}${path.includes("?") ? "&" : "?"}apikey=${data.key}`;
  const repeated = withKey(products[0]!);
  for (let i = 0; i < WARMUP; i++) await get(server.port, repeated);
  // Search's and the other product's own warm-up: another query and another product, so that the measured ones are
  // first requests of theirs, not of code that never ran.
  await get(server.port, withKey(products[1]!));
  await get(server.port, withKey(`/v1/products?q=${encodeURIComponent(data.words[1] ?? "a")}`));

  const idleCounts = await measure(server, []);
  const idle = new Map(idleCounts.flatMap((f) => f.functions.map((g) => [key(f.file, g.offset), g.count] as const)));
  const windows: Array<[string, string[]]> = [
    [
      `repeated product detail (${repeat} x GET ${products[0]}), per request`,
      Array.from({ length: repeat }, () => repeated),
    ],
    [`first request of another product (GET ${products[2]})`, [withKey(products[2]!)]],
    [`search (GET /v1/products?q=${data.words[0]})`, [withKey(`/v1/products?q=${data.words[0]}`)]],
  ];
  for (const [title, paths] of windows) {
    const { path, background } = split(await measure(server, paths), idle, paths.length);
    print(title, path, paths.length > 1 ? "calls/request" : "calls");
    if (background.length)
      process.stdout.write(
        `  background in the same window (not per request): ${background.map((b) => `${b.file} (${b.calls})`).join(", ")}\n`,
      );
  }
  print(
    `idle window (${MIN_WINDOW_MS / 1000} s, no request): timers`,
    idleCounts.map((f) => ({
      file: f.file,
      calls: f.functions.reduce((a, g) => a + g.count, 0),
      functions: f.functions.map((g) => ({ name: g.name, calls: g.count })),
    })),
    "calls",
  );
} finally {
  agent.destroy();
  await server?.stop();
  await data.cleanup();
}
