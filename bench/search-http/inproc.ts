// The search-http benchmark's work without HTTP: each search of the mix parsed, searched and its page assembled
// (identity bytes, or the gzip assembled from pieces) in this process, timed by CPU. For before/after comparisons
// of the engine and page assembly that other processes on the machine do not disturb, and a digest of every answer
// (ids, total, facets, body bytes) to show that a change leaves them the same.
//   npx tsx bench/search-http/inproc.ts <dir of a search-http run (--dir)>/products-N [--passes 5] [--queries 1000]
//     [--seed 1] [--only engine|page]
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { loadSnapshot } from "../../src/snapshot/load.ts";
import { parseQuery } from "../../src/serve/admission/request.ts";
import { release } from "../../src/serve/bodies/scratch.ts";
import { searchBody } from "../../src/serve/endpoints/search.ts";
import { parseSearchParams } from "../../src/serve/admission/search-params.ts";
import { readCatalogDocs } from "../search/corpus.ts";
import { makeQueries } from "../search/queries.ts";
import { searchTarget } from "./urls.ts";

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    passes: { type: "string", default: "5" },
    queries: { type: "string", default: "1000" },
    seed: { type: "string", default: "1" },
  },
});
const dir = positionals[0];
if (!dir) {
  process.stderr.write("usage: inproc.ts <search-http --dir>/products-N [--passes N] [--queries N] [--seed N]\n");
  process.exit(2);
}
/** The same instant as bench/search-http.ts. */
const NOW = 1_800_000_000;
const meta = JSON.parse(await readFile(join(dir, "bench-meta.json"), "utf8")) as { key: string };
const docs = await readCatalogDocs(join(dir, "catalog"));
const mix = makeQueries(docs, Number(args.queries), Number(args.seed), NOW);
const targets = [...new Set(mix.queries.map((q) => searchTarget(q, meta.key)))];
const params = targets.map((t) => parseSearchParams(parseQuery(t.slice(t.indexOf("?") + 1))));
const t0 = performance.now();
const snapshot = await loadSnapshot(join(dir, "data"));
const loadMs = performance.now() - t0;

const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e3; // ms
};

/** One pass: engine only, engine + identity page, engine + gzip page; returns CPU ms of each. */
function pass(digest: ReturnType<typeof createHash> | null): { engine: number; identity: number; gzip: number } {
  let c = cpu();
  for (const p of params) snapshot.search.search({ ...p, now: NOW });
  const engine = cpu() - c;
  c = cpu();
  for (const p of params) {
    const found = searchBody(snapshot, p, NOW);
    const bytes = found.body.identity;
    digest?.update(found.body.hash).update(bytes);
    release(bytes);
  }
  const identity = cpu() - c;
  c = cpu();
  for (const p of params) {
    const found = searchBody(snapshot, p, NOW);
    const gz = found.gzip ? found.gzip() : found.body.identity;
    digest?.update(gz);
    release(gz);
  }
  const gzip = cpu() - c;
  return { engine, identity, gzip };
}

const digest = createHash("sha256");
for (const p of params) {
  const r = snapshot.search.search({ ...p, now: NOW });
  // Doc numbers are how the engine names its results internally, not part of the answer.
  digest.update(JSON.stringify({ ...r, docs: undefined }));
}
pass(digest);
const passes = Number(args.passes);
const runs = Array.from({ length: passes }, () => pass(null));
const best = (k: "engine" | "identity" | "gzip") => Math.min(...runs.map((r) => r[k]));
const us = (ms: number) => ((ms * 1000) / params.length).toFixed(1).padStart(7);
console.log(
  `${params.length} distinct searches, ${docs.length} docs, snapshot loaded in ${loadMs.toFixed(0)} ms; CPU us/search, best of ${passes} passes:`,
);
console.log(
  `   engine ${us(best("engine"))}   engine+identity page ${us(best("identity"))}   engine+gzip page ${us(best("gzip"))}`,
);
console.log(`   answers digest ${digest.digest("hex").slice(0, 16)}`);
