// `npm run bench -- build [--scales 6000,100000] [--sweep 20]`: full, no-change and 1% rebuilds, each in its own
// process, at each scale; then the server as deployed on the snapshot: how long it takes to listen, its memory once
// loaded, and its memory after --sweep seconds of requests for random products (the body cache filling up).
import { spawnSync } from "node:child_process";
import { createReadStream, createWriteStream, readFileSync } from "node:fs";
import { mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { writeSampleCatalog } from "../src/catalog/sample/index.ts";
import { createKey } from "../src/keys/keys-file.ts";
import { SERVER_NODE_FLAGS } from "../src/serve/http/server.ts";
import { startDeployedOn } from "./lib/servers.ts";
import { runWrk } from "./lib/wrk.ts";

const { values } = parseArgs({
  options: {
    scales: { type: "string", default: "6000,100000" },
    sweep: { type: "string", default: "20" },
    keep: { type: "boolean" },
  },
});
const scales = values.scales.split(",").map(Number);
const sweepSeconds = Number(values.sweep);
const repoRoot = join(import.meta.dirname, "..");

/** The issue's targets by scale: build seconds and peak (MiB, as the build prints it), server memory and start-up. */
const TARGETS: Record<
  number,
  { full: number; peakMiB: number; same: number; one: number; rssGB?: number; readyS?: number }
> = {
  100_000: { full: 60, peakMiB: 2 * 1024, same: 10, one: 15 },
  1_000_000: { full: 480, peakMiB: 8e9 / 2 ** 20, same: 10, one: 90, rssGB: 4, readyS: 20 },
};

const METRICS_TOKEN = "bench-build-metrics-token";

/** VmRSS and VmHWM (the peak) of a process, bytes. */
function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kb("VmRSS"), peak: kb("VmHWM") };
}

interface Served {
  /** Bytes the body cache held after the sweep (flash_sale_body_cache_bytes), of BODY_CACHE_MB (default 1024 MB). */
  cacheBytes: number;
  readySeconds: number;
  loaded: { rss: number; peak: number };
  swept: { rss: number; peak: number };
  requests: number;
  ok: number;
}

/** The server as deployed on the snapshot: seconds to listen, memory loaded, memory after a random-product sweep. */
async function serveOn(root: string, dataDir: string, products: number): Promise<Served> {
  const keysFile = join(root, "keys.json");
  const key = await createKey(keysFile, "bench", new Date(), { rate: 1e9, burst: 1e9 });
  const script = join(root, "random-products.lua");
  // Sample product IDs run from 100001; about one in five is on sale at any moment (the others are 404s).
  await writeFile(
    script,
    `request = function()\n  return wrk.format("GET", "/v1/products/" .. math.random(100001, ${100_000 + products}) .. "/detail.json?apikey=${key}")\nend\n`,
  );
  const started = performance.now();
  const server = await startDeployedOn(
    { dataDir, keysFile },
    {
      cwd: repoRoot,
      workDir: root,
      name: "server",
      host: "127.0.0.1",
      core: null,
      nodeArgs: SERVER_NODE_FLAGS,
      env: { LOG_REQUESTS: "0", METRICS_TOKEN: METRICS_TOKEN },
    },
  );
  try {
    const readySeconds = (performance.now() - started) / 1000;
    await new Promise((r) => setTimeout(r, 2000));
    const loaded = memoryOf(server.pid);
    const r = await runWrk(`http://127.0.0.1:${server.port}/`, {
      core: null,
      connections: 32,
      duration: sweepSeconds,
      headers: {},
      script,
    });
    const swept = memoryOf(server.pid);
    const metrics = await fetch(`http://127.0.0.1:${server.port}/metrics`, {
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    }).then((res) => res.text());
    const cacheBytes = Number(/^flash_sale_body_cache_bytes (\d+)/m.exec(metrics)?.[1] ?? NaN);
    return { readySeconds, loaded, swept, cacheBytes, requests: r.requests, ok: r.requests - r.non2xx };
  } finally {
    await server.stop();
  }
}
const NOW = new Date("2026-11-22T12:00:00Z");

interface Run {
  label: string;
  seconds: number;
  mbWritten: number;
  files: number;
  peakMb: number;
  line: string;
  /** Seconds spent in each phase the build reports (--verbose), in order. */
  phases: [string, number][];
}

/** Runs the build CLI in a fresh process and parses its one-line summary. */
function build(catalogDir: string, dataDir: string, label: string): Run {
  const started = performance.now();
  const out = spawnSync(
    process.execPath,
    [
      // As `npm run build` runs it (package.json): a heap that holds a 1,000,000-product catalog.
      "--max-old-space-size=12288",
      "--import",
      "tsx",
      "src/cli/build.ts",
      "--catalog",
      catalogDir,
      "--data",
      dataDir,
      "--base-url",
      "https://api.example.com",
      "--verbose",
    ],
    { encoding: "utf8", maxBuffer: 1 << 26 },
  );
  const seconds = (performance.now() - started) / 1000;
  const line = out.stdout.trim().split("\n").pop() ?? "";
  if (out.status !== 0) throw new Error(`${label} failed (${out.status}):\n${out.stderr}`);
  const num = (re: RegExp) => Number(re.exec(line)?.[1] ?? NaN);
  // "build: 2.8 s: render" on stderr as each phase starts; the summary's time ends the last one.
  const starts = [...out.stderr.matchAll(/^build: ([\d.]+) s: (\w+)$/gm)].map((m) => [m[2]!, Number(m[1])] as const);
  const end = num(/ in ([\d.]+) s,/);
  const phases = starts.map(([name, at], i): [string, number] => [name, (starts[i + 1]?.[1] ?? end) - at]);
  return {
    label,
    seconds,
    files: num(/(\d+) files/),
    mbWritten: num(/([\d.]+) MB written/),
    peakMb: num(/peak RSS (\d+) MB/),
    line,
    phases,
  };
}

/** Changes every 100th product (its first SKU's inventory status), streaming the file. */
async function touchOnePercent(catalogDir: string): Promise<number> {
  const file = join(catalogDir, "products.ndjson");
  const tmp = `${file}.new`;
  const out = createWriteStream(tmp);
  let n = 0;
  let changed = 0;
  for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
    if (!line.trim()) continue;
    let text = line;
    if (n++ % 100 === 0) {
      const p = JSON.parse(line) as { skus: { inventory_status: string }[] };
      p.skus[0]!.inventory_status = p.skus[0]!.inventory_status === "sold out" ? "for sale" : "sold out";
      text = JSON.stringify(p);
      changed++;
    }
    if (!out.write(text + "\n")) await new Promise<void>((r) => out.once("drain", () => r()));
  }
  await new Promise<void>((r) => out.end(() => r()));
  await rename(tmp, file);
  return changed;
}

function du(path: string): number {
  const out = spawnSync("du", ["-sb", path], { encoding: "utf8" });
  return Number(out.stdout.split("\t")[0]) / 1e6;
}

const rows: string[][] = [];
const verdicts: string[] = [];
const check = (pass: boolean, what: string) => verdicts.push(`${pass ? "PASS" : "FAIL"}  ${what}`);
const gb = (bytes: number) => (bytes / 1e9).toFixed(2);
for (const products of scales) {
  const root = await mkdtemp(join(tmpdir(), "bench-build-"));
  const catalogDir = join(root, "catalog");
  const dataDir = join(root, "data");
  const t0 = performance.now();
  const counts = await writeSampleCatalog(catalogDir, { products, now: NOW });
  const genSeconds = (performance.now() - t0) / 1000;
  console.log(
    `\n${products} products: sample generated in ${genSeconds.toFixed(1)} s (${counts.sales} sales, ${counts.skus} SKUs)`,
  );
  const full = build(catalogDir, dataDir, "full");
  const diskMb = du(dataDir);
  const same = build(catalogDir, dataDir, "no change");
  const changed = await touchOnePercent(catalogDir);
  const one = build(catalogDir, dataDir, `1% (${changed} products)`);
  for (const r of [full, same, one]) {
    console.log(`  ${r.label}: ${r.line}`);
    if (r.phases.length > 0)
      console.log(`    phases (s): ${r.phases.map(([p, s]) => `${p} ${s.toFixed(1)}`).join(", ")}`);
    rows.push([
      String(products),
      r.label,
      r.seconds.toFixed(1),
      r.mbWritten.toFixed(1),
      String(r.files),
      String(r.peakMb),
    ]);
  }
  console.log(`  snapshot on disk: ${diskMb.toFixed(0)} MB`);
  rows.push([String(products), "on disk (MB)", "", diskMb.toFixed(0), "", ""]);
  const served = await serveOn(root, dataDir, products);
  console.log(
    `  server as deployed: listening after ${served.readySeconds.toFixed(1)} s (npm start-up not included); RSS ${gb(served.loaded.rss)} GB loaded; after ${sweepSeconds} s of random products (${served.requests} requests, ${served.ok} of them 200s) RSS ${gb(served.swept.rss)} GB, peak ${gb(served.swept.peak)} GB, body cache ${(served.cacheBytes / 2 ** 20).toFixed(0)} MB of 1024`,
  );
  const t = TARGETS[products];
  if (t) {
    const at = `at ${products.toLocaleString("en-US")} products`;
    check(
      full.seconds < t.full && full.peakMb < t.peakMiB,
      `${at}: full build ${full.seconds.toFixed(1)} s (< ${t.full}), peak ${full.peakMb} MiB (< ${Math.round(t.peakMiB)})`,
    );
    check(
      same.seconds < t.same && same.files === 0,
      `${at}: no-change rebuild ${same.seconds.toFixed(1)} s (< ${t.same}), ${same.files} files written (0)`,
    );
    check(one.seconds < t.one, `${at}: 1% rebuild ${one.seconds.toFixed(1)} s (< ${t.one})`);
    if (t.rssGB !== undefined)
      check(
        served.swept.peak < t.rssGB * 1e9,
        `${at}: server peak RSS ${gb(served.swept.peak)} GB (< ${t.rssGB}), loaded and after the sweep`,
      );
    if (t.readyS !== undefined)
      check(
        served.readySeconds < t.readyS,
        `${at}: server listening after ${served.readySeconds.toFixed(1)} s (< ${t.readyS})`,
      );
  }
  if (!values.keep) await rm(root, { recursive: true, force: true });
}

const header = ["products", "build", "seconds", "MB written", "files", "peak RSS MB"];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
const fmt = (r: string[]) => r.map((c, i) => c.padStart(widths[i]!)).join("  ");
console.log("\n" + fmt(header));
for (const r of rows) console.log(fmt(r));
console.log(
  "\ntargets at 100,000 products: full < 60 s and < 2 GB peak; no-change < 10 s writing nothing; 1% < 15 s" +
    "\n  at 1,000,000: full < 8 min and < 8 GB peak; no-change < 10 s writing nothing; 1% < 90 s; server < 4 GB RSS, listening in < 20 s",
);
for (const v of verdicts) console.log(v);
