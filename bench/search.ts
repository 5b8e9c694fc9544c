// Search benchmark: our engine vs MiniSearch and FlexSearch on the sample catalog, checked against brute force.
//   npx tsx bench/search.ts [--sizes 6000,100000] [--queries 600] [--passes 2] [--warmup 2] [--seed 1]
// Each engine builds, then loads and queries, in processes of its own. Exits 1 if any page of ours differs
// from the brute-force BM25F reference.
import { fork } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { loadSearchIndex } from "../src/search/index-format.ts";
import { stem } from "../src/search/stem.ts";
import type { SearchQuery } from "../src/search/types.ts";
import { searchQuery } from "../src/search/types.ts";
import { sampleCorpus } from "./search/corpus.ts";
import { ENGINES } from "./search/engines.ts";
import type { Searcher } from "./search/engines.ts";
import { misspellings } from "./search/misspell.ts";
import { makeQueries, surfaceWords } from "./search/queries.ts";
import { comparePage, createReference } from "./search/reference.ts";
import type { BuildReport, QueryReport } from "./search/worker.ts";

const { values: args } = parseArgs({
  options: {
    sizes: { type: "string", default: "6000,100000" },
    queries: { type: "string", default: "600" },
    passes: { type: "string", default: "2" },
    warmup: { type: "string", default: "2" },
    seed: { type: "string", default: "1" },
  },
});
const SIZES = args.sizes.split(",").map(Number);
const QUERY_COUNT = Number(args.queries);
const PASSES = Number(args.passes);
const WARMUP = Math.max(1, Number(args.warmup));
const SEED = Number(args.seed);
/** Misspelt product names checked per size. */
const MISSPELLINGS = 1000;
/** A fixed instant (2027-01-15T08:00:00Z), so that every run sees the same catalog. */
const NOW = 1_800_000_000;
const WORKER = fileURLToPath(new URL("./search/worker.ts", import.meta.url));

function run<T>(argv: string[]): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = fork(WORKER, argv, { stdio: ["ignore", "inherit", "inherit", "ipc"] });
    let report: T | undefined;
    child.on("message", (m) => (report = m as T));
    child.on("error", reject);
    child.on("exit", (code) =>
      code === 0 && report
        ? resolve(report)
        : reject(new Error(`worker ${argv.slice(0, 2).join(" ")} exited with ${code}`)),
    );
  });
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const ms = (x: number) => (x < 10 ? x.toFixed(3) : x.toFixed(1)).padStart(8);
const mb = (x: number) => (x / 1e6).toFixed(1).padStart(7);
const secs = (x: number) => (x / 1000).toFixed(2).padStart(6);
const ratio = (theirs: number, ours: number) => `${(theirs / ours).toFixed(theirs / ours < 10 ? 1 : 0)}x`;

interface Row {
  name: string;
  build: BuildReport;
  query: QueryReport;
  p50: number;
  p99: number;
  cpu50: number;
  cpu99: number;
  mean: number;
  pages: ReturnType<Searcher["search"]>[];
}

/** Our stemmer against wink-porter2-stemmer (a bench dependency) on every word of the corpus. */
function stemmerCheck(words: Set<string>): string {
  const wink = createRequire(import.meta.url)("wink-porter2-stemmer") as (w: string) => string;
  const differ = [...words].filter((w) => /^[a-z]+$/.test(w) && stem(w) !== wink(w));
  return `stemmer: ${words.size} corpus words, ${differ.length} stemmed differently from wink-porter2-stemmer${differ.length ? `: ${differ.slice(0, 10).join(", ")}` : ""}`;
}

async function benchSize(products: number, work: string): Promise<boolean> {
  const dir = join(work, String(products));
  await mkdir(dir, { recursive: true });
  let t = performance.now();
  const corpus = await sampleCorpus(join(dir, "catalog"), products, SEED, NOW);
  const docs = corpus.docs;
  const genMs = performance.now() - t;
  const mix = makeQueries(docs, QUERY_COUNT, SEED, NOW);
  await writeFile(join(dir, "docs.json"), JSON.stringify(docs));
  await writeFile(join(dir, "queries.json"), JSON.stringify(mix.queries));

  const rows: Row[] = [];
  for (const engine of ENGINES) {
    const out = join(dir, engine.name);
    await mkdir(out, { recursive: true });
    const build = await run<BuildReport>(["build", engine.name, out, join(dir, "docs.json")]);
    const query = await run<QueryReport>([
      "query",
      engine.name,
      out,
      join(dir, "queries.json"),
      `${PASSES}/${WARMUP}`,
      build.files.join(","),
    ]);
    const sorted = [...query.latencies].sort((a, b) => a - b);
    const cpu = [...query.cpu].sort((a, b) => a - b);
    const pages = JSON.parse(await readFile(join(out, "pages.json"), "utf8")) as Row["pages"];
    rows.push({
      name: engine.name,
      build,
      query,
      p50: percentile(sorted, 50),
      p99: percentile(sorted, 99),
      cpu50: percentile(cpu, 50),
      cpu99: percentile(cpu, 99),
      mean: sorted.reduce((a, b) => a + b, 0) / sorted.length,
      pages,
    });
  }

  // Check ours against the brute-force reference, page by page.
  t = performance.now();
  const reference = createReference(docs);
  const refPages = mix.queries.map((q) => reference.search(q));
  const refMs = performance.now() - t;
  const ours = rows[0]!;
  const problems: string[] = [];
  let exact = 0;
  mix.queries.forEach((q: SearchQuery, i) => {
    const page = ours.pages[i]!;
    const ref = refPages[i]!;
    const problem = comparePage(page.ids, page.total, ref, q.start, q.rows, page.facets);
    if (problem) problems.push(`${JSON.stringify(q)}: ${problem}`);
    else if (page.ids.every((id, j) => id === ref.ranked[q.start + j]!.id)) exact++;
  });
  // How often the libraries' first page has the same products as ours (they rank differently; for context only).
  const overlap = rows.slice(1).map((row) => {
    let same = 0;
    let totals = 0;
    mix.queries.forEach((_, i) => {
      const a = ours.pages[i]!;
      const b = row.pages[i]!;
      if (a.total === b.total) totals++;
      if (a.ids.length === b.ids.length && new Set([...a.ids, ...b.ids]).size === a.ids.length) same++;
    });
    return `${row.name}: same total ${totals}/${mix.queries.length}, same page set ${same}/${mix.queries.length}`;
  });

  // Misspelt product names (one edit in one word): is the product, or one of the same name, in our top 10?
  const index = loadSearchIndex(await readFile(join(dir, "ours", "search.idx")));
  const live = docs.filter((d) => d.windows.some((w) => w.from <= NOW && (w.to === null || NOW < w.to)));
  const nameOf = new Map(docs.map((d) => [d.id, d.name]));
  const typoSet = misspellings(live, MISSPELLINGS, SEED);
  const hits = typoSet.filter((m) => {
    const found = index.search(searchQuery(m.q, NOW));
    return found.ids.some((id) => id === m.id || nameOf.get(id) === m.name);
  }).length;
  const hitRate = hits / Math.max(1, typoSet.length);

  const totals = refPages.map((r) => r.total).sort((a, b) => a - b);
  const words = new Set(docs.flatMap((d) => [...surfaceWords(d.name), ...surfaceWords(d.description)]));
  console.log(
    `\n== ${products.toLocaleString("en")} products (${corpus.source}; ${docs.length.toLocaleString("en")} ever on sale, generated in ${secs(genMs).trim()} s)`,
  );
  console.log(
    `   ${mix.queries.length} queries: ${mix.counts.broad} broad single words (${mix.broad.slice(0, 6).join(", ")}, ...), ${mix.counts.multiWord} multi-word, ` +
      `${mix.counts.filtered} filtered, ${mix.counts.typo} misspelt, ${mix.counts.prefix} prefix=1, ${mix.counts.facets} with facets, ` +
      `${mix.counts.priceSort} sorted by price, ${mix.counts.priceRange} with a price range; matches per query: median ${percentile(totals, 50)}, p90 ${percentile(totals, 90)}, max ${totals.at(-1)}; ` +
      `${totals.filter((x) => x === 0).length} with none`,
  );
  console.log(
    `   latency: ${PASSES} timed passes after ${WARMUP} warm-up passes, each query timed alone, in-process; wall clock, and CPU time ` +
      `(immune to other processes; load average now ${loadavg()
        .map((x) => x.toFixed(1))
        .join(" ")} on 2 cores)`,
  );
  console.log(
    `   engine        build s  file MB  load s  mem MB (heap + buffers)   rss MB    p50 ms    p99 ms  cpu p50   cpu p99   mean ms`,
  );
  for (const r of rows) {
    const q = r.query;
    console.log(
      `   ${r.name.padEnd(12)} ${secs(r.build.buildMs)}  ${mb(r.build.bytes)}  ${secs(q.loadMs)}  ${mb(q.memoryAfterQueries)} (${mb(q.heapAfterQueries).trim()} + ${mb(q.buffersAfterQueries).trim()})`.padEnd(
        70,
      ) + `${mb(q.rss)}  ${ms(r.p50)}  ${ms(r.p99)}  ${ms(r.cpu50)}  ${ms(r.cpu99)}  ${ms(r.mean)}`,
    );
  }
  for (const r of rows.slice(1)) {
    console.log(
      `   ours vs ${r.name.padEnd(10)}: p50 ${ratio(r.p50, ours.p50)} faster, p99 ${ratio(r.p99, ours.p99)} faster ` +
        `(cpu ${ratio(r.cpu50, ours.cpu50)}, ${ratio(r.cpu99, ours.cpu99)}), ` +
        `file ${ratio(r.build.bytes, ours.build.bytes)} smaller, load ${ratio(r.query.loadMs, ours.query.loadMs)} faster, ` +
        `memory ${ratio(r.query.memoryAfterQueries, ours.query.memoryAfterQueries)} less, build ${ratio(r.build.buildMs, ours.build.buildMs)} faster`,
    );
  }
  console.log(
    `   reference: ${mix.queries.length - problems.length}/${mix.queries.length} pages agree with brute-force BM25F (${exact} identical, ${mix.queries.length - problems.length - exact} equal up to float32 score rounding; reference took ${secs(refMs).trim()} s)`,
  );
  console.log(`   overlap with ours (context only): ${overlap.join("; ")}`);
  console.log(
    `   misspellings (one edit in one word of a product's name, ${typoSet.length} of them): the product or one of its name in our top 10 for ${hits} (${(100 * hitRate).toFixed(1)}%; target >= 95%)`,
  );
  console.log(`   ${stemmerCheck(words)}`);
  console.log(
    `   build rss, docs parsed -> peak: ${rows.map((r) => `${r.name} ${mb(r.build.rssBefore).trim()} -> ${mb(r.build.peakRss).trim()} MB`).join(", ")}`,
  );
  if (products >= 100_000) {
    const peers = rows.slice(1);
    const checks: [string, boolean][] = [
      [`p50 ${ours.p50.toFixed(3)} ms < 0.5 ms`, ours.p50 < 0.5],
      [`p99 ${ours.p99.toFixed(3)} ms < 3 ms`, ours.p99 < 3],
      [`cpu p99 ${ours.cpu99.toFixed(3)} ms < 3 ms`, ours.cpu99 < 3],
      ...peers.map((r): [string, boolean] => [
        `>= 10x ${r.name} at p50 (${ratio(r.p50, ours.p50)}) and p99 (${ratio(r.p99, ours.p99)})`,
        r.p50 >= 10 * ours.p50 && r.p99 >= 10 * ours.p99,
      ]),
      [`load ${ours.query.loadMs.toFixed(0)} ms < 1 s`, ours.query.loadMs < 1000],
      [`memory ${mb(ours.query.memoryAfterQueries).trim()} MB < 250 MB`, ours.query.memoryAfterQueries < 250e6],
      [`file ${mb(ours.build.bytes).trim()} MB < 50 MB`, ours.build.bytes < 50e6],
      [`misspellings ${(100 * hitRate).toFixed(1)}% >= 95%`, hitRate >= 0.95],
    ];
    console.log(`   targets: ${checks.map(([what, ok]) => `${ok ? "ok" : "MISSED"} ${what}`).join("; ")}`);
  }
  if (problems.length > 0) {
    console.error(`\nDISAGREEMENT: ${problems.length} pages of ours differ from the reference; first ones:`);
    for (const p of problems.slice(0, 10)) console.error(`  ${p}`);
    return false;
  }
  return true;
}

// The libraries compared against live in bench/package.json, apart from the project's own dependencies.
for (const dep of ["minisearch", "flexsearch", "wink-porter2-stemmer"]) {
  try {
    createRequire(import.meta.url).resolve(dep);
  } catch {
    console.error(`bench/search: ${dep} is not installed; run: npm ci --prefix bench`);
    process.exit(2);
  }
}

const work = await mkdtemp(join(tmpdir(), "search-bench-"));
let ok = true;
try {
  const started = performance.now();
  console.log(`search benchmark: node ${process.version}, seed ${SEED}, now ${new Date(NOW * 1000).toISOString()}`);
  for (const size of SIZES) ok = (await benchSize(size, work)) && ok;
  console.log(`\ntotal ${secs(performance.now() - started).trim()} s`);
} finally {
  await rm(work, { recursive: true, force: true });
}
if (!ok) process.exit(1);
