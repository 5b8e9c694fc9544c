// One engine in a fresh process: `build` (docs -> index files) or `query` (load the files, time every query).
// A process each, so that one engine's garbage, JIT state and heap never count against another.
import { readFile, writeFile } from "node:fs/promises";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import type { SearchDoc, SearchQuery } from "../../src/search/types.ts";
import { ENGINES, writeFiles } from "./engines.ts";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;
const settle = () => {
  for (let i = 0; i < 3; i++) gc();
};
const memory = () => {
  settle();
  const m = process.memoryUsage();
  return { heap: m.heapUsed, buffers: m.arrayBuffers, rss: m.rss };
};

export interface BuildReport {
  buildMs: number;
  bytes: number;
  files: string[];
  /** Resident memory with the docs parsed, before the build; and the process's peak. */
  rssBefore: number;
  peakRss: number;
}
export interface QueryReport {
  loadMs: number;
  /** Heap + array buffers held after loading and after the query passes, minus the process's baseline. */
  memoryAfterLoad: number;
  memoryAfterQueries: number;
  heapAfterQueries: number;
  buffersAfterQueries: number;
  rss: number;
  /** Per query, per timed pass, in milliseconds: wall clock, and CPU time of the process (immune to other processes taking the core). */
  latencies: number[];
  cpu: number[];
}

const [phase, engineName, dir, arg1, arg2, arg3] = process.argv.slice(2);
const engine = ENGINES.find((e) => e.name === engineName);
if (!engine || !dir) throw new Error(`usage: worker.ts build|query <engine> <dir> ...`);

if (phase === "build") {
  const docs = JSON.parse(await readFile(arg1!, "utf8")) as SearchDoc[];
  settle();
  const rssBefore = process.memoryUsage().rss;
  const t0 = performance.now();
  const files = engine.build(docs);
  const buildMs = performance.now() - t0;
  const bytes = await writeFiles(dir, files);
  const report: BuildReport = {
    buildMs,
    bytes,
    files: [...files.keys()],
    rssBefore,
    peakRss: process.resourceUsage().maxRSS * 1024,
  };
  process.send!(report);
} else if (phase === "query") {
  const queries = JSON.parse(await readFile(arg1!, "utf8")) as SearchQuery[];
  const files = arg3!.split(",");
  const [passes, warmup] = arg2!.split("/").map(Number) as [number, number];
  const base = memory();
  const t0 = performance.now();
  const searcher = await engine.load(dir, files);
  const loadMs = performance.now() - t0;
  const afterLoad = memory();
  // Untimed passes: warm the JIT (its compiler threads count as process CPU time) and record each page.
  const pages = queries.map((q) => searcher.search(q));
  for (let pass = 1; pass < warmup; pass++) for (const q of queries) searcher.search(q);
  const latencies: number[] = [];
  const cpu: number[] = [];
  for (let pass = 0; pass < passes; pass++) {
    for (const q of queries) {
      const c = process.cpuUsage();
      const t = process.hrtime.bigint();
      searcher.search(q);
      const wall = Number(process.hrtime.bigint() - t) / 1e6;
      const used = process.cpuUsage(c);
      latencies.push(wall);
      cpu.push((used.user + used.system) / 1000);
    }
  }
  const after = memory();
  searcher.search(queries[0]!); // keeps the index alive (and counted) until after the measurement
  await writeFile(`${dir}/pages.json`, JSON.stringify(pages));
  const report: QueryReport = {
    loadMs,
    memoryAfterLoad: afterLoad.heap + afterLoad.buffers - base.heap - base.buffers,
    memoryAfterQueries: after.heap + after.buffers - base.heap - base.buffers,
    heapAfterQueries: after.heap - base.heap,
    buffersAfterQueries: after.buffers - base.buffers,
    rss: after.rss,
    latencies,
    cpu,
  };
  process.send!(report);
} else {
  throw new Error(`unknown phase ${phase}`);
}
