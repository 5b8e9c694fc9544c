// Serve benchmark: pre-rendered GETs through our handler vs a bare node:http server (same bytes) vs serve-handler (same files);
// the same through the server as `npm run serve` runs it (request logs on, to a file) vs bare; requests with a new affid
// each time vs the same resource without (our handler both times); and rejections (401, 429, 404) vs a 200 on one server.
// Run: npm run bench -- serve [--duration 5] [--rounds 3] [--warmup 2] [--connections 64] [--products N] [--seed N] [--cases a,b]
//        [--reject-duration 3] [--reject-warmup 1] [--reject-rounds 5] [--profile] [--keep]
// --cases: only the cases whose label contains one of the comma-separated words (case-insensitive), e.g. --cases affid,
// --cases deployed (the as-deployed cases, rejections included), --cases reject (every rejection case).
// --reject-duration, --reject-warmup: seconds of each rejection case's runs (and of their 200s); default the smaller of
// 3 and --duration, and of 1 and --warmup. --reject-rounds: their rounds (default 5, at least --rounds).
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { cpus, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import type { BareRoute } from "./serve/child-config.ts";
import {
  CheckError,
  decodeBody,
  expect,
  expectBrotliOf,
  expectOk,
  expectSameBytes,
  httpGet,
  replayableHeaders,
  waitForBrotli,
} from "./serve/check.ts";
import type { RawResponse } from "./serve/check.ts";
import { freePort, startServerChild } from "./serve/children.ts";
import type { ServerChild } from "./serve/children.ts";
import { loadNote, preflight } from "./serve/preflight.ts";
import { summarizeProfiles } from "./serve/profile.ts";
import { renderTable, renderVerdicts } from "./serve/report.ts";
import type { CaseResult } from "./serve/report.ts";
import { prepareSnapshot } from "./serve/snapshot.ts";
import { fmtBytes } from "./serve/table.ts";
import { runWrk } from "./serve/wrk.ts";
import { AFFID_LABELS, prepareAffidCases } from "./serve/affid.ts";
import { affidRunSeconds, measureAffid } from "./serve/affid-measure.ts";
import { renderAffidTable, renderAffidVerdicts } from "./serve/affid-report.ts";
import { countLogLines, startDeployed } from "./serve/deployed.ts";
import type { DeployedServer } from "./serve/deployed.ts";
import { measureInterleaved, medianRun, pairedRatio } from "./serve/measure.ts";
import type { Run, Stream } from "./serve/measure.ts";
import { renderLogVerdict } from "./serve/deployed-report.ts";
import type { SentCount } from "./serve/deployed-report.ts";
import {
  LOCKOUT_WAIT_MS,
  OPEN_AUTH_FAILURE_LIMIT,
  prepareRejectGroup,
  REJECT_LABELS,
  REJECT_SERVER_NAMES,
  rejectLabel,
  rejectRunSeconds,
  SLOW_KEY_LIMIT,
} from "./serve/reject.ts";
import type { RejectServer, RejectTargets } from "./serve/reject.ts";
import { renderRejectTable, renderRejectVerdicts } from "./serve/reject-report.ts";
import type { RejectResult } from "./serve/reject-report.ts";
import type { BenchServer, Subject } from "./serve/report.ts";
import type { WrkOptions, WrkResult } from "./serve/wrk.ts";
import { createKey, generateKey } from "../src/keys/keys-file.ts";
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
    "reject-duration": { type: "string" },
    "reject-rounds": { type: "string" },
    "reject-warmup": { type: "string" },
  },
});
const duration = Number(opts.duration);
const rounds = Math.max(1, Number(opts.rounds));
const warmup = Number(opts.warmup);
const connections = Number(opts.connections);
/** Rejection cases are many (each server's 200 and up to four rejections, every round): shorter runs keep the run bounded. */
const rejectDuration = Number(opts["reject-duration"] ?? Math.min(3, duration));
const rejectWarmup = Number(opts["reject-warmup"] ?? Math.min(1, warmup));
/**
 * A rejection and the 200 it is held against cost within a few percent of each other (a 404 is a 200 without its
 * resource lookup and with a smaller body: 0.92-1.00x its CPU here, measured by hand in one server), and the ratio
 * of one round's short runs spread by about 5% either way: five rounds, so that one disturbed round does not decide.
 */
const rejectRounds = Math.max(rounds, Number(opts["reject-rounds"] ?? 5));
const caseFilters = opts.cases
  .split(",")
  .map((f) => f.trim().toLowerCase())
  .filter(Boolean);
/** Whether --cases selects the case with this label (every case without --cases). */
const wanted = (label: string) => caseFilters.length === 0 || caseFilters.some((f) => label.toLowerCase().includes(f));

/** The cases measured against bare and serve-handler. */
const LABELS = {
  productId: "product detail, identity",
  productBr: "product detail, br",
  listId: "sale list, identity",
  listBr: "sale list, br",
} as const;
/** The cases measured through the server as deployed (src/cli/serve.ts, request logs on) against bare (issue 10). */
const DEPLOYED_LABELS = {
  productId: "as deployed: product detail, identity",
  productBr: "as deployed: product detail, br",
  listBr: "as deployed: sale list, br",
} as const;

/** One benchmarked request: a resource in one encoding, and the URL of each server that serves it. */
interface BenchCase {
  label: string;
  /** The server the case is about: its ratios to the others are the targets. */
  subject: Subject;
  encoding: "identity" | "br";
  headers: Record<string, string>;
  urls: Partial<Record<BenchServer, string>>;
  /** What the handler sent, which every other server must match byte for byte. */
  expected: RawResponse;
  note?: string;
  /** Whether the p99 target applies: to small bodies; a big one is bound by its bytes (see report.ts). */
  p99Target: boolean;
}

const log = (msg: string) => process.stderr.write(`bench: ${msg}\n`);

const REJECT_SERVERS = ["handler", "open", "deployed"] as const satisfies readonly RejectServer[];

async function main(): Promise<number> {
  const rejectWanted = Object.fromEntries(REJECT_SERVERS.map((s) => [s, REJECT_LABELS[s].filter(wanted)])) as Record<
    RejectServer,
    string[]
  >;
  const allLabels = [
    ...Object.values(LABELS),
    ...Object.values(DEPLOYED_LABELS),
    ...AFFID_LABELS,
    ...REJECT_SERVERS.flatMap((s) => REJECT_LABELS[s]),
  ];
  const selected = {
    plain: Object.values(LABELS).filter(wanted).length,
    deployed: Object.values(DEPLOYED_LABELS).filter(wanted).length,
    affid: AFFID_LABELS.filter(wanted).length,
    reject: REJECT_SERVERS.reduce((n, s) => n + rejectWanted[s].length, 0),
  };
  if (selected.plain + selected.deployed + selected.affid + selected.reject === 0)
    throw new Error(`--cases ${opts.cases} selects no case; the cases are: ${allLabels.join("; ")}`);
  const withDeployed = selected.deployed > 0 || rejectWanted.deployed.length > 0;
  const withOpen = rejectWanted.open.length > 0;
  const pre = preflight(repoRoot);
  const load = loadNote();
  const workDir = await mkdtemp(join(tmpdir(), "fsa-bench-serve-"));
  const children: ServerChild[] = [];
  try {
    const handlerPort = await freePort();
    const baseUrl = `http://${HOST}:${handlerPort}`;
    log("writing the catalog and building the snapshot ...");
    // Two servers' measured runs with their warm-ups per case and round (serve-handler once in two cases), start-up
    // and checks, the affid cases, and the rejection cases (each server's 200 and its rejections, every round).
    const rejectSeconds = REJECT_SERVERS.reduce((sum, s) => {
      const n = rejectWanted[s].length;
      return n
        ? sum +
            rejectRunSeconds(
              n + 1,
              rejectWanted[s].filter((l) => l === rejectLabel(s, "locked")).length,
              rejectRounds,
              rejectWarmup,
              rejectDuration,
            )
        : sum;
    }, 0);
    // The table's cases start servers of their own each round.
    const startups =
      3 +
      Number(withDeployed) +
      Number(withOpen) +
      (selected.plain ? 2 * rounds + 1 : 0) +
      (selected.deployed ? 2 * rounds : 0);
    const runSeconds =
      (2 * (selected.plain + selected.deployed) * rounds + Math.min(selected.plain, 2)) * (warmup + duration) +
      startups * STARTUP_WARMUP_SEC +
      30 +
      affidRunSeconds(selected.affid, rounds, warmup, duration) +
      rejectSeconds;
    const snap = await prepareSnapshot(workDir, {
      baseUrl,
      seed: Number(opts.seed),
      stableFor: runSeconds,
      log,
      ...(opts.products ? { products: Number(opts.products) } : {}),
    });
    log(`built in ${(snap.buildMs / 1000).toFixed(1)} s; ${snap.catalogNote}`);
    // The 429 cases' key: every server loads the keys file at start-up, so it is made before any starts.
    const slowKey = await createKey(snap.keysFile, "bench-slow", new Date(), { ...SLOW_KEY_LIMIT });

    // What each server was sent, by port (wrk's completed requests, its runs and socket errors, single requests):
    // the as-deployed server's request log must have a line for each.
    const sent = new Map<number, SentCount>();
    const tally = (url: string): SentCount => {
      const port = Number(new URL(url).port);
      let t = sent.get(port);
      if (!t) sent.set(port, (t = { requests: 0, runs: 0, socketErrors: 0, checks: 0 }));
      return t;
    };
    const wrk = async (url: string, o: WrkOptions): Promise<WrkResult> => {
      const r = await runWrk(url, o);
      const t = tally(url);
      t.requests += r.requests;
      t.runs++;
      t.socketErrors += r.socketErrors;
      return r;
    };
    const get = (url: string, headers: Record<string, string> = {}) => {
      tally(url).checks++;
      return httpGet(url, headers);
    };

    const coreOf = (who: "server" | "wrk") => (pre.cores ? pre.cores[who] : null);
    const profileDir = join(workDir, "profile");
    if (opts.profile) await mkdir(profileDir);
    // Every server runs with the node options `npm run serve` gives ours, so that all of them run on the same VM settings.
    const spawnOpts = { core: coreOf("server"), cwd: repoRoot, workDir, nodeArgs: [...SERVER_NODE_FLAGS] };
    log("starting the handler ...");
    const handler = await startServerChild(
      "handler",
      { mode: "handler", host: HOST, port: handlerPort, dataDir: snap.dataDir, keysFile: snap.keysFile },
      { ...spawnOpts, env: opts.profile ? { BENCH_CPU_PROFILE: join(profileDir, "handler.cpuprofile") } : {} },
    );
    children.push(handler);
    let deployed: DeployedServer | null = null;
    const deployedEnv = {
      DATA_DIR: snap.dataDir,
      KEYS_FILE: snap.keysFile,
      PORT: "0",
      HOST,
      BASE_URL: baseUrl,
      LOG_REQUESTS: "1",
      METRICS_TOKEN: randomBytes(16).toString("hex"),
    };
    /** The server as deployed, on the server core, its request log to <workDir>/<logName>. */
    const startDeployedTo = (logName: string) =>
      startDeployed({
        cwd: repoRoot,
        core: coreOf("server"),
        nodeArgs: SERVER_NODE_FLAGS,
        logFile: join(workDir, logName),
        env: deployedEnv,
      });
    if (withDeployed) {
      log("starting the server as deployed (src/cli/serve.ts, request logs to a file) ...");
      deployed = await startDeployedTo("deployed-requests.log");
      children.push(deployed);
    }
    let open: ServerChild | null = null;
    if (withOpen) {
      log("starting a handler whose failed-authentication limit is raised ...");
      open = await startServerChild(
        "handler-open",
        {
          mode: "handler",
          host: HOST,
          port: 0,
          dataDir: snap.dataDir,
          keysFile: snap.keysFile,
          authFailureLimit: { ...OPEN_AUTH_FAILURE_LIMIT },
        },
        spawnOpts,
      );
      children.push(open);
    }

    const q = `?apikey=${snap.key}`;
    const hurl = (path: string) => `http://${HOST}:${handler.port}${path}`;
    const durl = (path: string) => `http://${HOST}:${deployed!.port}${path}`;
    const BR = { "Accept-Encoding": "br" };

    // --- the handler's own responses, checked against the snapshot on disk ---
    const unauth = await get(hurl(snap.product.path));
    expect(
      unauth.status === 401,
      `handler without a key: status ${unauth.status}, expected 401 (is the key check on?)`,
    );
    const blobBytes = snap.product.identity;
    const brBytes = snap.product.br;
    const prodId = await get(hurl(snap.product.path + q));
    expectOk(prodId, "handler product", "identity");
    expectSameBytes(prodId.body, blobBytes, "handler product body vs its blob in the snapshot's pack");
    expect(
      (JSON.parse(prodId.body.toString()) as { product?: string }).product?.endsWith(snap.product.path) === true,
      "handler product body is not that product's detail",
    );
    const prodBr = await get(hurl(snap.product.path + q), BR);
    expectOk(prodBr, "handler product (br)", "br");
    expectBrotliOf(prodBr.body, blobBytes, "handler product (br)");
    if (brBytes) expectSameBytes(prodBr.body, brBytes, "handler product brotli body vs its brotli blob in the pack");
    const listId = await get(hurl(snap.list.path + q));
    expectOk(listId, "handler sale list", "identity");
    const listJson = JSON.parse(listId.body.toString()) as { sales?: unknown[] };
    expect(
      listJson.sales?.length === snap.list.sales,
      `handler sale list has ${listJson.sales?.length} sales, the snapshot ${snap.list.sales}`,
    );
    expect(
      listId.body.length === snap.list.size,
      `handler sale list is ${listId.body.length} bytes, the snapshot's parts add up to ${snap.list.size}`,
    );
    const listBr = await waitForBrotli(() => get(hurl(snap.list.path + q), BR), "handler sale list (br)");
    expectBrotliOf(listBr.body, listId.body, "handler sale list (br)");
    // --- the server as deployed sends the handler's bytes ---
    if (deployed && selected.deployed) {
      const dId = await get(durl(snap.product.path + q));
      expectOk(dId, "as-deployed product", "identity");
      expectSameBytes(dId.body, prodId.body, "as-deployed product vs the handler's");
      const dBr = await get(durl(snap.product.path + q), BR);
      expectOk(dBr, "as-deployed product (br)", "br");
      expectSameBytes(dBr.body, prodBr.body, "as-deployed product (br) vs the handler's");
      const dList = await waitForBrotli(() => get(durl(snap.list.path + q), BR), "as-deployed sale list (br)");
      expectSameBytes(dList.body, listBr.body, "as-deployed sale list (br) vs the handler's");
    }

    // --- the other two servers, given the same bytes ---
    const bareFiles = join(workDir, "bare");
    await mkdir(bareFiles);
    const bareRoute = async (name: string, path: string, id: RawResponse, br: RawResponse): Promise<BareRoute> => {
      await writeFile(join(bareFiles, `${name}.identity`), id.body);
      await writeFile(join(bareFiles, `${name}.br`), br.body);
      return {
        url: path + q,
        identity: { file: join(bareFiles, `${name}.identity`), headers: replayableHeaders(id) },
        br: { file: join(bareFiles, `${name}.br`), headers: replayableHeaders(br) },
      };
    };
    const routes = [
      await bareRoute("product", snap.product.path, prodId, prodBr),
      await bareRoute("list", snap.list.path, listId, listBr),
    ];
    log("starting the bare server and serve-handler ...");
    const bare = await startServerChild("bare", { mode: "bare", host: HOST, port: 0, routes }, spawnOpts);
    children.push(bare);
    const sh = await startServerChild(
      "serve-handler",
      { mode: "serve-handler", host: HOST, port: 0, publicDir: snap.product.staticDir },
      spawnOpts,
    );
    children.push(sh);

    const blobUrl = (file: string) => `http://${HOST}:${sh.port}/${file.slice(snap.product.staticDir.length + 1)}${q}`;
    const bareUrl = (path: string) => `http://${HOST}:${bare.port}${path}${q}`;
    const deployedNote = "src/cli/serve.ts as npm run serve runs it, request logs on (stdout to a file); vs bare only";
    const allCases: BenchCase[] = [
      {
        label: LABELS.productId,
        subject: "handler",
        encoding: "identity",
        headers: {},
        expected: prodId,
        p99Target: true,
        urls: {
          handler: hurl(snap.product.path + q),
          bare: bareUrl(snap.product.path),
          "serve-handler": blobUrl(snap.product.file),
        },
      },
      {
        label: LABELS.productBr,
        subject: "handler",
        encoding: "br",
        headers: BR,
        expected: prodBr,
        p99Target: true,
        urls: {
          handler: hurl(snap.product.path + q),
          bare: bareUrl(snap.product.path),
          ...(snap.product.brFile ? { "serve-handler": blobUrl(snap.product.brFile) } : {}),
        },
        note: "serve-handler does not negotiate encodings: it is asked for the blob's .json.br file (the same brotli bytes, without Content-Encoding)",
      },
      {
        label: LABELS.listId,
        subject: "handler",
        encoding: "identity",
        headers: {},
        expected: listId,
        p99Target: false,
        urls: { handler: hurl(snap.list.path + q), bare: bareUrl(snap.list.path) },
        note: `${snap.list.sales} active sales, all stores; composed in memory by the handler (no file on disk), so handler vs bare only`,
      },
      {
        label: LABELS.listBr,
        subject: "handler",
        encoding: "br",
        headers: BR,
        expected: listBr,
        p99Target: false,
        urls: { handler: hurl(snap.list.path + q), bare: bareUrl(snap.list.path) },
        note: "handler vs bare only, as above",
      },
      ...(deployed
        ? ([
            {
              label: DEPLOYED_LABELS.productId,
              subject: "deployed",
              encoding: "identity",
              headers: {},
              expected: prodId,
              p99Target: true,
              urls: { deployed: durl(snap.product.path + q), bare: bareUrl(snap.product.path) },
              note: deployedNote,
            },
            {
              label: DEPLOYED_LABELS.productBr,
              subject: "deployed",
              encoding: "br",
              headers: BR,
              expected: prodBr,
              p99Target: true,
              urls: { deployed: durl(snap.product.path + q), bare: bareUrl(snap.product.path) },
              note: deployedNote,
            },
            {
              label: DEPLOYED_LABELS.listBr,
              subject: "deployed",
              encoding: "br",
              headers: BR,
              expected: listBr,
              p99Target: false,
              urls: { deployed: durl(snap.list.path + q), bare: bareUrl(snap.list.path) },
              note: deployedNote,
            },
          ] satisfies BenchCase[])
        : []),
    ];
    const cases = allCases.filter((c) => wanted(c.label));
    for (const c of cases) {
      for (const mode of ["bare", "serve-handler"] as const) {
        const url = c.urls[mode];
        if (!url) continue;
        const res = await get(url, c.headers);
        // serve-handler serves the .br file as a plain file, so it is checked as identity bytes.
        expectOk(res, `${mode} ${c.label}`, mode === "bare" ? c.encoding : "identity");
        expectSameBytes(res.body, c.expected.body, `${mode} vs handler, ${c.label}`);
      }
    }
    log(
      `checked: handler bodies match the snapshot's blobs (401 without a key), brotli decodes to identity, bare and serve-handler send byte-identical bodies${deployed && selected.deployed ? ", and so does the server as deployed" : ""}`,
    );
    const affidCases = await prepareAffidCases(
      { "sale list": snap.list.path, product: snap.product.path },
      snap.key,
      (t, h) => get(hurl(t), h),
      wanted,
    );
    for (const c of affidCases)
      log(`checked ${c.label}: ${c.checkNote}${c.problems.length ? `; PROBLEM: ${c.problems.join("; ")}` : ""}`);
    if (affidCases.length)
      log(
        "checked: with a new affid, 200s whose bodies (decoded per Content-Encoding) are the plain body's JSON with &affid=<value> in every page link and nothing else changed",
      );

    // --- measurement: per case, the servers back to back, each warmed up first; the order of ours and bare
    // alternates from case to case, so that load drifting up or down does not always favour the same one ---
    const results: CaseResult[] = [];
    // Start-up warm-up: a freshly started process spends its first seconds compiling hot code and collecting what
    // loading left behind, on the same pinned core. The servers the affid and rejection cases measure get this once
    // here; the table's cases start servers of their own each round (below), which get it then.
    const productUrl = (child: ServerChild | null) =>
      child ? `http://${HOST}:${child.port}${snap.product.path}${q}` : undefined;
    const startupUrls = [
      affidCases.length || rejectWanted.handler.length ? productUrl(handler) : undefined,
      rejectWanted.deployed.length ? productUrl(deployed) : undefined,
      productUrl(open),
    ];
    for (const url of startupUrls)
      if (url) await wrk(url, { core: coreOf("wrk"), connections, headers: {}, duration: STARTUP_WARMUP_SEC });
    /** A case's result from each server's median round; the ratios to the subject paired round by round. */
    const caseResult = (c: BenchCase, modes: readonly BenchServer[], medians: Map<string, Run>): CaseResult => {
      const res: CaseResult = {
        label: c.label,
        subject: c.subject,
        bytes: c.expected.body.length,
        ...(c.note ? { note: c.note } : {}),
        p99Target: c.p99Target,
        results: {},
        cpuUsPerRequest: {},
        coreShare: {},
        paired: {},
      };
      const subjectRun = medians.get(c.subject);
      for (const m of modes) {
        const run = medians.get(m);
        if (!run) continue;
        res.results[m] = run.r;
        if (run.cpu !== undefined) res.cpuUsPerRequest[m] = run.cpu;
        if (run.share !== undefined) res.coreShare[m] = run.share;
        if (m !== c.subject)
          res.paired![m] = {
            rps: pairedRatio(subjectRun, run, (x) => x.r.requestsPerSec),
            cpu: pairedRatio(run, subjectRun, (x) => x.cpu),
          };
      }
      return res;
    };
    // Each round starts the servers its cases compare (ours, bare, and serve-handler in the first round only: 4x off,
    // one round says enough), warms each up, measures every case on them (ours and bare back to back, alternating
    // which goes first) and stops them. On this machine a server process keeps the speed it starts with for its
    // lifetime, and that speed differs from one start to the next by up to 16% (bare measured 10.9-11.0 us a request
    // in two starts and 12.6-12.9 in five, the extra time in the kernel's TCP path): with one process a side for the
    // whole run, one unlucky start decided every round. Each round's ratio now pairs new processes; each server's
    // figures are those of its median round, and the ratios the median of the rounds' (see measure.ts).
    const measureOptions = { wrk, core: coreOf("wrk"), connections, duration, warmup, log };
    /** A case's URL on a server started for a round: the long-lived server's URL with that server's port. */
    const urlOn = (child: ServerChild, url: string) => {
      const u = new URL(url);
      return `http://${HOST}:${child.port}${u.pathname}${u.search}`;
    };
    const freshDeployed: DeployedServer[] = [];
    const measureGroup = async (
      group: readonly BenchCase[],
      modes: readonly BenchServer[],
      what: string,
      start: (round: number) => Promise<Partial<Record<BenchServer, ServerChild>>>,
    ) => {
      if (!group.length) return;
      const runs = new Map<string, Map<string, Run[]>>(group.map((c) => [c.label, new Map()]));
      for (let round = 0; round < rounds; round++) {
        log(`round ${round + 1}/${rounds} of the ${what} cases: starting their servers ...`);
        const servers = await start(round);
        const started = modes.flatMap((m) => (servers[m] ? [[m, servers[m]] as const] : []));
        for (const [m, child] of started) {
          const first = group.find((c) => c.urls[m])?.urls[m];
          if (first)
            await wrk(urlOn(child, first), {
              core: coreOf("wrk"),
              connections,
              headers: {},
              duration: STARTUP_WARMUP_SEC,
            });
        }
        for (const [i, c] of group.entries()) {
          const streams: Stream[] = started.flatMap(([m, child]) =>
            c.urls[m]
              ? [
                  {
                    name: m,
                    url: urlOn(child, c.urls[m]),
                    pid: child.pid,
                    headers: c.headers,
                    once: m === "serve-handler",
                  },
                ]
              : [],
          );
          const medians = await measureInterleaved(streams, {
            ...measureOptions,
            rounds: 1,
            offset: i + round,
            label: `${c.label} [round ${round + 1}/${rounds}]`,
          });
          const byServer = runs.get(c.label)!;
          for (const [name, run] of medians) {
            if (!byServer.has(name)) byServer.set(name, []);
            const { byRound: _, ...one } = run;
            byServer.get(name)!.push(one);
          }
        }
        // Stopped with SIGTERM, an as-deployed server writes what its log buffer holds before it exits.
        for (const [, child] of started) {
          await child.stop();
          children.splice(children.indexOf(child), 1);
        }
      }
      for (const c of group)
        results.push(
          caseResult(c, modes, new Map([...runs.get(c.label)!].map(([name, list]) => [name, medianRun(list)]))),
        );
    };
    /** Every server started is stopped at the end even if a later one fails to start. */
    const track = <T extends ServerChild>(child: T): T => (children.push(child), child);
    const startBare = async (round: number) =>
      track(
        await startServerChild(`bare-round-${round + 1}`, { mode: "bare", host: HOST, port: 0, routes }, spawnOpts),
      );
    await measureGroup(
      cases.filter((c) => c.subject === "handler"),
      ["handler", "bare", "serve-handler"],
      "handler",
      async (round) => ({
        handler: track(
          await startServerChild(
            `handler-round-${round + 1}`,
            { mode: "handler", host: HOST, port: 0, dataDir: snap.dataDir, keysFile: snap.keysFile },
            {
              ...spawnOpts,
              env: opts.profile ? { BENCH_CPU_PROFILE: join(profileDir, `handler-round-${round + 1}.cpuprofile`) } : {},
            },
          ),
        ),
        bare: await startBare(round),
        ...(round === 0
          ? {
              "serve-handler": track(
                await startServerChild(
                  "serve-handler-round-1",
                  { mode: "serve-handler", host: HOST, port: 0, publicDir: snap.product.staticDir },
                  spawnOpts,
                ),
              ),
            }
          : {}),
      }),
    );
    await measureGroup(
      cases.filter((c) => c.subject === "deployed"),
      ["deployed", "bare"],
      "as-deployed",
      async (round) => {
        const d = track(await startDeployedTo(`deployed-round-${round + 1}.log`));
        freshDeployed.push(d);
        return { deployed: d, bare: await startBare(round) };
      },
    );

    const affidResults = await measureAffid(affidCases, {
      pid: handler.pid,
      base: hurl(""),
      key: snap.key,
      core: coreOf("wrk"),
      connections,
      duration,
      warmup,
      rounds,
      dir: workDir,
      log,
    });

    // --- rejections, per server after everything else: an invalid key leaves the address a failure bucket that
    // every later request pays a lookup for, and locks it out for a second after each run ---
    const rejectResults: RejectResult[] = [];
    const targets: RejectTargets = {
      productPath: snap.product.path,
      key: snap.key,
      slowKey,
      badKey: generateKey(),
      productBody: prodId.body,
    };
    const rejectChildren: Record<RejectServer, ServerChild | null> = { handler, open, deployed };
    for (const server of REJECT_SERVERS) {
      const child = rejectChildren[server];
      if (!child) continue;
      const base = `http://${HOST}:${child.port}`;
      const group = await prepareRejectGroup(server, targets, (t) => get(base + t), wanted);
      if (!group) continue;
      for (const c of group.cases) log(`checked ${c.label}: ${c.checkNote}`);
      const lockoutWait = () => new Promise<void>((resolve) => setTimeout(resolve, LOCKOUT_WAIT_MS));
      const streams: Stream[] = [
        { name: "200", url: base + group.baseline.target, pid: child.pid, headers: {} },
        ...group.cases.map((c) => ({
          name: c.short,
          url: base + c.target,
          pid: child.pid,
          headers: {},
          ...(c.kind === "locked" ? { after: lockoutWait } : {}),
        })),
      ];
      const medians = await measureInterleaved(streams, {
        wrk,
        core: coreOf("wrk"),
        connections,
        duration: rejectDuration,
        warmup: rejectWarmup,
        rounds: rejectRounds,
        offset: 0,
        label: `reject [${REJECT_SERVER_NAMES[server]}]`,
        log,
      });
      rejectResults.push({
        group,
        baseline: medians.get("200")!,
        runs: new Map(group.cases.map((c) => [c.label, medians.get(c.short)!])),
      });
    }

    // The handler picks bodies by the clock: make sure no sale began or ended while we measured.
    for (const c of cases) {
      const again = await get(c.urls[c.subject]!, c.headers);
      if (!again.body.equals(c.expected.body)) {
        const r = results.find((x) => x.label === c.label)!;
        r.note = `${r.note ? r.note + "; " : ""}WARNING: the ${c.subject === "handler" ? "handler" : "as-deployed server"}'s body changed during the run (a sale boundary passed): rerun`;
      }
    }
    for (const c of affidCases) {
      const again = decodeBody(
        await get(hurl(`${c.path}${q}`), c.headers),
        `${c.label}: plain, after the run`,
      ).identity;
      if (!again.equals(c.plainIdentity)) {
        const r = affidResults.find((x) => x.label === c.label)!;
        r.note = `${r.note ? r.note + "; " : ""}WARNING: the handler's body changed during the run (a sale boundary passed): rerun`;
      }
    }
    for (const child of children.splice(0).reverse()) await child.stop();
    // Stopped with SIGTERM, the server writes what its log buffer holds before it exits: now the file is complete.
    const logVerdicts = deployed
      ? renderLogVerdict(
          await Promise.all(
            [deployed, ...freshDeployed].map(async (server) => ({
              server,
              count: await countLogLines(server.logFile),
              sent: sent.get(server.port),
            })),
          ),
          connections,
        )
      : [];

    const cpu = cpus()[0]?.model ?? "unknown CPU";
    const lines = [
      "",
      `serve benchmark: wrk -t1 -c${connections} -d${duration}s --latency (after a ${warmup} s warm-up; each server warmed up once for ${STARTUP_WARMUP_SEC} s after starting); ours and bare: the median of ${rounds} interleaved rounds, each on servers started for it, GET with a valid apikey`,
      `node options of every server: ${SERVER_NODE_FLAGS.join(" ") || "none"} (as npm run serve runs ours)`,
      `pinning: ${pre.cores ? `servers on core ${pre.cores.server}, wrk on core ${pre.cores.wrk} (taskset)` : "none"}; ${cpus().length} x ${cpu}; node ${process.version}`,
      `load at start: ${load}`,
      `load at end:   ${loadNote()}`,
      `input: ${snap.catalogNote}; snapshot built in ${(snap.buildMs / 1000).toFixed(1)} s`,
      `product: ${snap.product.path} (${fmtBytes(snap.product.identity.length)}, br ${fmtBytes(snap.product.br?.length ?? 0)}); list: ${snap.list.path} (${snap.list.sales} sales, ${fmtBytes(snap.list.size)}${snap.list.stableForSec !== null ? `, unchanged for ${Math.floor(snap.list.stableForSec / 60)} min after the build` : ""})`,
      `servers: handler = createHandler + startServer (src/serve), no request logs; bare = node:http writing the handler's bytes and headers from memory (a Map lookup on the URL, no auth); serve-handler ${await serveHandlerVersion()} on the product's body written out as <hash>.json and <hash>.json.br (the snapshot keeps bodies in packs)`,
      ...(deployed
        ? [
            `as deployed = node ${[...SERVER_NODE_FLAGS, "--import", "tsx", "src/cli/serve.ts"].join(" ")} with ${Object.entries(
              deployedEnv,
            )
              .map(([k, v]) => `${k}=${k === "METRICS_TOKEN" ? "<random>" : v}`)
              .join(
                " ",
              )} NODE_ENV=production, stdout >> ${join(workDir, "deployed-*.log")}; the as-deployed cases start an as-deployed server and a bare server of their own each round (the rejection cases use the first one)`,
          ]
        : []),
      ...(rejectResults.length
        ? [
            `rejection cases: wrk -t1 -c${connections} -d${rejectDuration}s after a ${rejectWarmup} s warm-up, each server's 200 and its rejections in ${rejectRounds} interleaved rounds, median round`,
          ]
        : []),
      ...pre.notes.map((n) => `note: ${n}`),
      ...(opts.profile
        ? [
            "note: --profile: the handler ran under the sampling profiler, which slows it; judge the targets from a run without it",
          ]
        : []),
    ];
    const verdicts = results.length ? renderVerdicts(results, connections) : [];
    if (results.length) lines.push("", renderTable(results), "", ...verdicts.map((v) => v.line));
    if (affidResults.length) {
      const affidVerdicts = renderAffidVerdicts(affidResults);
      lines.push("", renderAffidTable(affidResults), "", ...affidVerdicts.map((v) => v.line));
      verdicts.push(...affidVerdicts);
    }
    if (rejectResults.length) {
      const rejectVerdicts = renderRejectVerdicts(rejectResults, rejectDuration);
      lines.push("", renderRejectTable(rejectResults), "", ...rejectVerdicts.map((v) => v.line));
      verdicts.push(...rejectVerdicts);
    }
    if (logVerdicts.length) {
      lines.push("", ...logVerdicts.map((v) => v.line));
      verdicts.push(...logVerdicts);
    }
    process.stdout.write(lines.join("\n") + "\n");
    if (opts.profile)
      process.stdout.write(
        "\nhandler CPU profile (from listening to exit: checks, warm-ups and measurements):\n" +
          (await summarizeProfiles(profileDir, repoRoot)) +
          "\n",
      );
    return verdicts.every((v) => v.pass) ? 0 : 2;
  } finally {
    for (const child of children.reverse()) await child.stop().catch(() => undefined);
    if (opts.keep) log(`kept ${workDir}`);
    else await rm(workDir, { recursive: true, force: true });
  }
}

async function serveHandlerVersion(): Promise<string> {
  try {
    const pkg = JSON.parse(
      await readFile(join(repoRoot, "bench", "node_modules", "serve-handler", "package.json"), "utf8"),
    ) as { version?: string };
    return pkg.version ?? "?";
  } catch {
    return "?";
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(
      `bench: ${err instanceof CheckError ? "CHECK FAILED: " : ""}${(err as Error).message ?? String(err)}\n`,
    );
    process.exit(1);
  },
);
