// Serve benchmark: pre-rendered GETs through our handler vs a bare node:http server (same bytes) vs serve-handler (same files),
// and requests with a new affid each time vs the same resource without (our handler both times).
// Run: npm run bench -- serve [--duration 5] [--rounds 3] [--warmup 2] [--connections 64] [--products N] [--seed N] [--cases a,b] [--profile] [--keep]
// --cases: only the cases whose label contains one of the comma-separated words (case-insensitive), e.g. --cases affid.
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { cpus, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import type { BareRoute, ServerMode } from "./serve/child-config.ts";
import { CheckError, decodeBody, expect, expectBrotliOf, expectOk, expectSameBytes, httpGet, replayableHeaders, waitForBrotli } from "./serve/check.ts";
import type { RawResponse } from "./serve/check.ts";
import { freePort, startServerChild } from "./serve/children.ts";
import { cpuSeconds } from "./serve/cpu.ts";
import type { ServerChild } from "./serve/children.ts";
import { loadNote, preflight } from "./serve/preflight.ts";
import { summarizeProfiles } from "./serve/profile.ts";
import { fmtBytes, renderTable, renderVerdicts } from "./serve/report.ts";
import type { CaseResult } from "./serve/report.ts";
import { prepareSnapshot } from "./serve/snapshot.ts";
import { runWrk } from "./serve/wrk.ts";
import { AFFID_LABELS, prepareAffidCases } from "./serve/affid.ts";
import { affidRunSeconds, measureAffid } from "./serve/affid-measure.ts";
import { renderAffidTable, renderAffidVerdicts } from "./serve/affid-report.ts";
import { SERVER_NODE_FLAGS } from "../src/serve/server.ts";

const HOST = "127.0.0.1";
/** Seconds of load each server gets once after starting, before the per-case warm-ups and measurements. */
const STARTUP_WARMUP_SEC = 5;
const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..");

const { values: opts } = parseArgs({
  options: {
    duration: { type: "string", default: "5" },
    rounds: { type: "string", default: "3" },
    warmup: { type: "string", default: "2" },
    connections: { type: "string", default: "64" },
    products: { type: "string" },
    seed: { type: "string", default: "1" },
    profile: { type: "boolean", default: false },
    keep: { type: "boolean", default: false },
    cases: { type: "string", default: "" },
  },
});
const duration = Number(opts.duration);
const rounds = Math.max(1, Number(opts.rounds));
const warmup = Number(opts.warmup);
const connections = Number(opts.connections);
const caseFilters = opts.cases.split(",").map((f) => f.trim().toLowerCase()).filter(Boolean);
/** Whether --cases selects the case with this label (every case without --cases). */
const wanted = (label: string) => caseFilters.length === 0 || caseFilters.some((f) => label.toLowerCase().includes(f));

/** The cases measured against bare and serve-handler. */
const LABELS = { productId: "product detail, identity", productBr: "product detail, br", listId: "sale list, identity", listBr: "sale list, br" } as const;

/** One benchmarked request: a resource in one encoding, and the URL of each server that serves it. */
interface BenchCase {
  label: string;
  encoding: "identity" | "br";
  headers: Record<string, string>;
  urls: Partial<Record<ServerMode, string>>;
  /** What the handler sent, which every other server must match byte for byte. */
  expected: RawResponse;
  note?: string;
  /** Whether the p99 target applies: to small bodies; a big one is bound by its bytes (see report.ts). */
  p99Target: boolean;
}

const log = (msg: string) => process.stderr.write(`bench: ${msg}\n`);

async function main(): Promise<number> {
  const allLabels = [...Object.values(LABELS), ...AFFID_LABELS];
  const selected = { plain: Object.values(LABELS).filter(wanted).length, affid: AFFID_LABELS.filter(wanted).length };
  if (selected.plain + selected.affid === 0) throw new Error(`--cases ${opts.cases} selects no case; the cases are: ${allLabels.join("; ")}`);
  const pre = preflight(repoRoot);
  const load = loadNote();
  const workDir = await mkdtemp(join(tmpdir(), "fsa-bench-serve-"));
  const children: ServerChild[] = [];
  try {
    const handlerPort = await freePort();
    log("writing the catalog and building the snapshot ...");
    // Two servers' measured runs with their warm-ups per case and round (serve-handler once in two cases), start-up
    // and checks, and the affid cases.
    const runSeconds = (2 * selected.plain * rounds + Math.min(selected.plain, 2)) * (warmup + duration) + 3 * STARTUP_WARMUP_SEC + 30 + affidRunSeconds(selected.affid, rounds, warmup, duration);
    const snap = await prepareSnapshot(workDir, { baseUrl: `http://${HOST}:${handlerPort}`, seed: Number(opts.seed), stableFor: runSeconds, log, ...(opts.products ? { products: Number(opts.products) } : {}) });
    log(`built in ${(snap.buildMs / 1000).toFixed(1)} s; ${snap.catalogNote}`);

    const coreOf = (who: "server" | "wrk") => (pre.cores ? pre.cores[who] : null);
    const profileDir = join(workDir, "profile");
    if (opts.profile) await mkdir(profileDir);
    // Every server runs with the node options `npm run serve` gives ours, so that all three run on the same VM settings.
    const spawnOpts = { core: coreOf("server"), cwd: repoRoot, workDir, nodeArgs: [...SERVER_NODE_FLAGS] };
    log("starting the handler ...");
    const handler = await startServerChild("handler", { mode: "handler", host: HOST, port: handlerPort, dataDir: snap.dataDir, keysFile: snap.keysFile }, { ...spawnOpts, env: opts.profile ? { BENCH_CPU_PROFILE: join(profileDir, "handler.cpuprofile") } : {} });
    children.push(handler);

    const q = `?apikey=${snap.key}`;
    const hurl = (path: string) => `http://${HOST}:${handler.port}${path}`;
    const BR = { "Accept-Encoding": "br" };

    // --- the handler's own responses, checked against the snapshot on disk ---
    const unauth = await httpGet(hurl(snap.product.path));
    expect(unauth.status === 401, `handler without a key: status ${unauth.status}, expected 401 (is the key check on?)`);
    const blobBytes = snap.product.identity;
    const brBytes = snap.product.br;
    const prodId = await httpGet(hurl(snap.product.path + q));
    expectOk(prodId, "handler product", "identity");
    expectSameBytes(prodId.body, blobBytes, "handler product body vs its blob in the snapshot's pack");
    expect((JSON.parse(prodId.body.toString()) as { product?: string }).product?.endsWith(snap.product.path) === true, "handler product body is not that product's detail");
    const prodBr = await httpGet(hurl(snap.product.path + q), BR);
    expectOk(prodBr, "handler product (br)", "br");
    expectBrotliOf(prodBr.body, blobBytes, "handler product (br)");
    if (brBytes) expectSameBytes(prodBr.body, brBytes, "handler product brotli body vs its brotli blob in the pack");
    const listId = await httpGet(hurl(snap.list.path + q));
    expectOk(listId, "handler sale list", "identity");
    const listJson = JSON.parse(listId.body.toString()) as { sales?: unknown[] };
    expect(listJson.sales?.length === snap.list.sales, `handler sale list has ${listJson.sales?.length} sales, the snapshot ${snap.list.sales}`);
    expect(listId.body.length === snap.list.size, `handler sale list is ${listId.body.length} bytes, the snapshot's parts add up to ${snap.list.size}`);
    const listBr = await waitForBrotli(() => httpGet(hurl(snap.list.path + q), BR), "handler sale list (br)");
    expectBrotliOf(listBr.body, listId.body, "handler sale list (br)");

    // --- the other two servers, given the same bytes ---
    const bareFiles = join(workDir, "bare");
    await mkdir(bareFiles);
    const bareRoute = async (name: string, path: string, id: RawResponse, br: RawResponse): Promise<BareRoute> => {
      await writeFile(join(bareFiles, `${name}.identity`), id.body);
      await writeFile(join(bareFiles, `${name}.br`), br.body);
      return { url: path + q, identity: { file: join(bareFiles, `${name}.identity`), headers: replayableHeaders(id) }, br: { file: join(bareFiles, `${name}.br`), headers: replayableHeaders(br) } };
    };
    const routes = [await bareRoute("product", snap.product.path, prodId, prodBr), await bareRoute("list", snap.list.path, listId, listBr)];
    log("starting the bare server and serve-handler ...");
    const bare = await startServerChild("bare", { mode: "bare", host: HOST, port: 0, routes }, spawnOpts);
    children.push(bare);
    const sh = await startServerChild("serve-handler", { mode: "serve-handler", host: HOST, port: 0, publicDir: snap.product.staticDir }, spawnOpts);
    children.push(sh);

    const blobUrl = (file: string) => `http://${HOST}:${sh.port}/${file.slice(snap.product.staticDir.length + 1)}${q}`;
    const bareUrl = (path: string) => `http://${HOST}:${bare.port}${path}${q}`;
    const allCases: BenchCase[] = [
      { label: LABELS.productId, encoding: "identity", headers: {}, expected: prodId, p99Target: true, urls: { handler: hurl(snap.product.path + q), bare: bareUrl(snap.product.path), "serve-handler": blobUrl(snap.product.file) } },
      {
        label: LABELS.productBr, encoding: "br", headers: BR, expected: prodBr, p99Target: true,
        urls: { handler: hurl(snap.product.path + q), bare: bareUrl(snap.product.path), ...(snap.product.brFile ? { "serve-handler": blobUrl(snap.product.brFile) } : {}) },
        note: "serve-handler does not negotiate encodings: it is asked for the blob's .json.br file (the same brotli bytes, without Content-Encoding)",
      },
      { label: LABELS.listId, encoding: "identity", headers: {}, expected: listId, p99Target: false, urls: { handler: hurl(snap.list.path + q), bare: bareUrl(snap.list.path) }, note: `${snap.list.sales} active sales, all stores; composed in memory by the handler (no file on disk), so handler vs bare only` },
      { label: LABELS.listBr, encoding: "br", headers: BR, expected: listBr, p99Target: false, urls: { handler: hurl(snap.list.path + q), bare: bareUrl(snap.list.path) }, note: "handler vs bare only, as above" },
    ];
    const cases = allCases.filter((c) => wanted(c.label));
    for (const c of cases) {
      for (const mode of ["bare", "serve-handler"] as const) {
        const url = c.urls[mode];
        if (!url) continue;
        const res = await httpGet(url, c.headers);
        // serve-handler serves the .br file as a plain file, so it is checked as identity bytes.
        expectOk(res, `${mode} ${c.label}`, mode === "bare" ? c.encoding : "identity");
        expectSameBytes(res.body, c.expected.body, `${mode} vs handler, ${c.label}`);
      }
    }
    log("checked: handler bodies match the snapshot's blobs (401 without a key), brotli decodes to identity, bare and serve-handler send byte-identical bodies");
    const affidCases = await prepareAffidCases({ "sale list": snap.list.path, product: snap.product.path }, snap.key, (t, h) => httpGet(hurl(t), h), wanted);
    for (const c of affidCases) log(`checked ${c.label}: ${c.checkNote}${c.problems.length ? `; PROBLEM: ${c.problems.join("; ")}` : ""}`);
    if (affidCases.length) log("checked: with a new affid, 200s whose bodies (decoded per Content-Encoding) are the plain body's JSON with &affid=<value> in every page link and nothing else changed");

    // --- measurement: per case, the servers back to back, each warmed up first; the order of handler and
    // bare alternates from case to case, so that load drifting up or down does not always favour the same one ---
    const pids: Record<ServerMode, number> = { handler: handler.pid, bare: bare.pid, "serve-handler": sh.pid };
    const results: CaseResult[] = [];
    // Start-up warm-up: a freshly started process spends its first seconds compiling hot code and collecting what
    // loading left behind, on the same pinned core; every server gets this once, before its first measured case.
    for (const mode of ["handler", "bare", "serve-handler"] as const) {
      const url = cases.find((c) => c.urls[mode])?.urls[mode] ?? (mode === "handler" && affidCases.length ? hurl(snap.product.path + q) : undefined);
      if (url) await runWrk(url, { core: coreOf("wrk"), connections, headers: {}, duration: STARTUP_WARMUP_SEC });
    }
    // Each case is measured in `rounds` interleaved rounds (handler and bare alternating which goes first), and
    // each server's figures are those of its median round: on a shared machine the load drifts over minutes,
    // and back-to-back runs minutes apart disagree by more than the 10% being measured.
    for (const [i, c] of cases.entries()) {
      const res: CaseResult = { label: c.label, bytes: c.expected.body.length, ...(c.note ? { note: c.note } : {}), p99Target: c.p99Target, results: {}, cpuUsPerRequest: {}, coreShare: {} };
      const runs: Partial<Record<ServerMode, { r: Awaited<ReturnType<typeof runWrk>>; cpu?: number; share?: number }[]>> = {};
      for (let round = 0; round < rounds; round++) {
        const order = (i + round) % 2 === 0 ? (["handler", "bare", "serve-handler"] as const) : (["bare", "handler", "serve-handler"] as const);
        for (const mode of order) {
          const url = c.urls[mode];
          if (!url || (mode === "serve-handler" && round > 0)) continue; // serve-handler is 4x off: one round says enough
          const wrkOpts = { core: coreOf("wrk"), connections, headers: c.headers };
          await runWrk(url, { ...wrkOpts, duration: warmup });
          const cpuBefore = cpuSeconds(pids[mode]);
          const wallBefore = performance.now();
          const r = await runWrk(url, { ...wrkOpts, duration });
          const wall = (performance.now() - wallBefore) / 1000;
          const cpuAfter = cpuSeconds(pids[mode]);
          const run: { r: typeof r; cpu?: number; share?: number } = { r };
          if (cpuBefore !== null && cpuAfter !== null && r.requests > 0) {
            run.cpu = ((cpuAfter - cpuBefore) * 1e6) / r.requests;
            run.share = (cpuAfter - cpuBefore) / wall;
          }
          (runs[mode] ??= []).push(run);
          log(`${c.label.padEnd(26)} ${mode.padEnd(13)} round ${round + 1}/${rounds}: ${Math.round(r.requestsPerSec).toString().padStart(7)} req/s  p99 ${r.p99.toFixed(2)} ms  ${run.cpu?.toFixed(1) ?? "?"} CPU us/req  ${((run.share ?? 0) * 100).toFixed(0)}% of core`);
        }
      }
      for (const [mode, list] of Object.entries(runs) as [ServerMode, NonNullable<(typeof runs)[ServerMode]>][]) {
        const median = [...list].sort((x, y) => x.r.requestsPerSec - y.r.requestsPerSec)[Math.floor((list.length - 1) / 2)]!;
        res.results[mode] = median.r;
        if (median.cpu !== undefined) res.cpuUsPerRequest[mode] = median.cpu;
        if (median.share !== undefined) res.coreShare[mode] = median.share;
      }
      results.push(res);
    }

    const affidResults = await measureAffid(affidCases, { pid: handler.pid, base: hurl(""), key: snap.key, core: coreOf("wrk"), connections, duration, warmup, rounds, dir: workDir, log });

    // The handler picks bodies by the clock: make sure no sale began or ended while we measured.
    for (const c of cases) {
      const again = await httpGet(c.urls.handler!, c.headers);
      if (!again.body.equals(c.expected.body)) {
        const r = results.find((x) => x.label === c.label)!;
        r.note = `${r.note ? r.note + "; " : ""}WARNING: the handler's body changed during the run (a sale boundary passed): rerun`;
      }
    }
    for (const c of affidCases) {
      const again = decodeBody(await httpGet(hurl(`${c.path}${q}`), c.headers), `${c.label}: plain, after the run`).identity;
      if (!again.equals(c.plainIdentity)) {
        const r = affidResults.find((x) => x.label === c.label)!;
        r.note = `${r.note ? r.note + "; " : ""}WARNING: the handler's body changed during the run (a sale boundary passed): rerun`;
      }
    }
    for (const child of children.splice(0).reverse()) await child.stop();

    const cpu = cpus()[0]?.model ?? "unknown CPU";
    const lines = [
      "",
      `serve benchmark: wrk -t1 -c${connections} -d${duration}s --latency (after a ${warmup} s warm-up; each server warmed up once for ${STARTUP_WARMUP_SEC} s after starting); handler and bare: the median of ${rounds} interleaved rounds, GET with a valid apikey`,
      `node options of every server: ${SERVER_NODE_FLAGS.join(" ") || "none"} (as npm run serve runs ours)`,
      `pinning: ${pre.cores ? `servers on core ${pre.cores.server}, wrk on core ${pre.cores.wrk} (taskset)` : "none"}; ${cpus().length} x ${cpu}; node ${process.version}`,
      `load at start: ${load}`,
      `load at end:   ${loadNote()}`,
      `input: ${snap.catalogNote}; snapshot built in ${(snap.buildMs / 1000).toFixed(1)} s`,
      `product: ${snap.product.path} (${fmtBytes(snap.product.identity.length)}, br ${fmtBytes(snap.product.br?.length ?? 0)}); list: ${snap.list.path} (${snap.list.sales} sales, ${fmtBytes(snap.list.size)}${snap.list.stableForSec !== null ? `, unchanged for ${Math.floor(snap.list.stableForSec / 60)} min after the build` : ""})`,
      `servers: handler = createHandler + startServer (src/serve); bare = node:http writing the handler's bytes and headers from memory (a Map lookup on the URL, no auth); serve-handler ${await serveHandlerVersion()} on the product's body written out as <hash>.json and <hash>.json.br (the snapshot keeps bodies in packs)`,
      ...pre.notes.map((n) => `note: ${n}`),
      ...(opts.profile ? ["note: --profile: the handler ran under the sampling profiler, which slows it; judge the targets from a run without it"] : []),
    ];
    const verdicts = results.length ? renderVerdicts(results, connections) : [];
    if (results.length) lines.push("", renderTable(results), "", ...verdicts.map((v) => v.line));
    if (affidResults.length) {
      const affidVerdicts = renderAffidVerdicts(affidResults);
      lines.push("", renderAffidTable(affidResults), "", ...affidVerdicts.map((v) => v.line));
      verdicts.push(...affidVerdicts);
    }
    process.stdout.write(lines.join("\n") + "\n");
    if (opts.profile) process.stdout.write("\nhandler CPU profile (from listening to exit: checks, warm-ups and measurements):\n" + (await summarizeProfiles(profileDir, repoRoot)) + "\n");
    return verdicts.every((v) => v.pass) ? 0 : 2;
  } finally {
    for (const child of children.reverse()) await child.stop().catch(() => undefined);
    if (opts.keep) log(`kept ${workDir}`);
    else await rm(workDir, { recursive: true, force: true });
  }
}

async function serveHandlerVersion(): Promise<string> {
  try {
    const pkg = JSON.parse(await readFile(join(repoRoot, "bench", "node_modules", "serve-handler", "package.json"), "utf8")) as { version?: string };
    return pkg.version ?? "?";
  } catch {
    return "?";
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench: ${err instanceof CheckError ? "CHECK FAILED: " : ""}${(err as Error).message ?? String(err)}\n`);
    process.exit(1);
  },
);
