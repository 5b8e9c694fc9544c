// `npm run bench -- build [--scales 6000,100000]`: full, no-change and 1% rebuilds, each in its own process, at each scale.
import { spawnSync } from "node:child_process";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdtemp, rename, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { writeSampleCatalog } from "../src/catalog/sample/index.ts";

const { values } = parseArgs({
  options: { scales: { type: "string", default: "6000,100000" }, keep: { type: "boolean" } },
});
const scales = values.scales.split(",").map(Number);
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
  if (!values.keep) await rm(root, { recursive: true, force: true });
}

const header = ["products", "build", "seconds", "MB written", "files", "peak RSS MB"];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
const fmt = (r: string[]) => r.map((c, i) => c.padStart(widths[i]!)).join("  ");
console.log("\n" + fmt(header));
for (const r of rows) console.log(fmt(r));
console.log("\ntargets at 100,000 products: full < 60 s and < 2 GB peak; no-change < 10 s writing nothing; 1% < 15 s");
