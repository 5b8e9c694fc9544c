// What the serve benchmark's case families share: the options and the snapshot, the servers they start (each stopped
// at the end if its family did not), what each as-deployed server was sent (its request log must account for every
// request), and the byte checks of the product and sale-list responses.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { SERVER_NODE_FLAGS } from "../../src/serve/http/server.ts";
import { decodeBody, expect, expectOk, expectSameBytes, httpGet, replayableHeaders } from "../lib/check.ts";
import { waitForBrotli } from "../lib/check.ts";
import type { RawResponse } from "../lib/check.ts";
import { fmtBytes, fmtInt, note, verdict } from "../lib/report.ts";
import type { Verdict } from "../lib/report.ts";
import { measureInterleaved } from "../lib/rounds.ts";
import type { MeasureOptions, Stream } from "../lib/rounds.ts";
import { countLogLines, spawnServer, startDeployedOn } from "../lib/servers.ts";
import type { ServerChild } from "../lib/servers.ts";
import type { BenchSnapshot } from "../lib/snapshot.ts";
import { runWrk } from "../lib/wrk.ts";
import type { WrkOptions } from "../lib/wrk.ts";
import type { BareRoute, ChildConfig } from "./server-child.ts";

export const HOST = "127.0.0.1";

/** The benchmark's options, from its command line (bench/serve.ts). */
export interface ServeOptions {
  /** Seconds of each measured run, of the warm-up before it, and of the load a new server gets once. */
  duration: number;
  warmup: number;
  startupWarmup: number;
  rounds: number;
  connections: number;
  /** The rejection cases' runs: many, so shorter, and more rounds. */
  reject: { duration: number; warmup: number; rounds: number };
  /** Whether handlers, bare servers and as-deployed servers run under the CPU profiler (into <workDir>/profile). */
  profile: boolean;
}

/** A family of cases, measured by its own entry point in bench/serve/. */
export interface Family {
  /** Every case's label, in the order measured: --cases selects by label. */
  labels: readonly string[];
  /** Roughly how many seconds it takes with `cases` of its cases selected. */
  seconds(o: ServeOptions, cases: number): number;
  /** Checks and measures the cases `wanted` selects: its report (description, table, notes) and PASS/FAIL lines. */
  run(b: ServeBench, wanted: (label: string) => boolean): Promise<{ text: string; verdicts: Verdict[] }>;
}

export type ServeBench = ReturnType<typeof createServeBench>["bench"];
export type Deployed = Awaited<ReturnType<ServeBench["startDeployed"]>>;

/** The context, and a function that stops whatever it started that is still running. */
export function createServeBench(
  o: ServeOptions,
  snap: BenchSnapshot,
  at: { repoRoot: string; workDir: string; cores: { server: number; wrk: number } | null },
  log: (message: string) => void,
) {
  const children: ServerChild[] = [];
  /** What each as-deployed server was sent, by port: wrk's completed requests, runs and socket errors, single GETs. */
  const sent = new Map<number, { requests: number; runs: number; socketErrors: number; checks: number }>();
  const sentTo = (url: string) => sent.get(Number(new URL(url).port));
  // Every server runs with the node options `npm run serve` gives ours, so that all of them run on the same VM settings.
  const spawn = { core: at.cores?.server ?? null, cwd: at.repoRoot, nodeArgs: SERVER_NODE_FLAGS };
  const wrkOptions = { core: at.cores?.wrk ?? null, connections: o.connections };
  const wrk = async (url: string, w: WrkOptions) => {
    const r = await runWrk(url, w);
    const s = sentTo(url);
    if (s)
      [s.requests, s.runs, s.socketErrors] = [s.requests + r.requests, s.runs + 1, s.socketErrors + r.socketErrors];
    return r;
  };
  /** Warms a server just started up for --startup-warmup s on `warm` (a request target): it compiles hot code first. */
  const started = async <T extends ServerChild>(child: T, warm: string): Promise<T> => {
    children.push(child);
    await wrk(`http://${HOST}:${child.port}${warm}`, { ...wrkOptions, headers: {}, duration: o.startupWarmup });
    return child;
  };
  const bench = {
    o,
    snap,
    workDir: at.workDir,
    log,
    /** A GET (a check), counted for the as-deployed request-log check. */
    get(url: string, headers: Record<string, string> = {}): Promise<RawResponse> {
      const s = sentTo(url);
      if (s) s.checks++;
      return httpGet(url, headers);
    },
    /** measureInterleaved with wrk pinned and counted; duration, warm-up and rounds default to the options'. */
    measure(streams: readonly Stream[], m: Partial<MeasureOptions> & { label: string }) {
      const { duration, warmup, rounds } = o;
      return measureInterleaved(streams, { wrk, ...wrkOptions, duration, warmup, rounds, offset: 0, log, ...m });
    },
    /** Starts bench/serve/server-child.ts (a handler, bare or serve-handler) and warms it up on `warm`. */
    async start(name: string, config: ChildConfig, warm: string): Promise<ServerChild> {
      const file = join(at.workDir, `${name}.config.json`);
      await writeFile(file, JSON.stringify(config));
      const env: Record<string, string> = {};
      if (o.profile && config.mode !== "serve-handler")
        env.BENCH_CPU_PROFILE = join(at.workDir, "profile", `${name}.cpuprofile`);
      const script = join(at.repoRoot, "bench", "serve", "server-child.ts");
      return started(await spawnServer(name, script, [file], { ...spawn, env }), warm);
    },
    /** Starts our handler (createHandler + startServer, no request logs) in a server child, warmed up on `warm`. */
    startHandler(name: string, warm: string, authFailureLimit?: { rate: number; burst: number }) {
      const { dataDir, keysFile } = snap;
      return bench.start(name, { mode: "handler", host: HOST, port: 0, dataDir, keysFile, authFailureLimit }, warm);
    },
    /**
     * Starts the server as deployed, request logs on (to <workDir>/<name>.log), and warms it up on `warm`; `extra` adds
     * to its environment (USAGE=0: usage per key not counted).
     */
    async startDeployed(name: string, warm: string, extra: Record<string, string> = {}) {
      const env = { LOG_REQUESTS: "1", METRICS_TOKEN: "bench-metrics-token-0123456789", ...extra };
      // With --profile, V8's profiler from start to exit (the start-up and warm-up are a small part of a run), a
      // directory for each server: node names a profile for each of its threads (tsx's loader runs in one).
      const profiled = o.profile
        ? [...spawn.nodeArgs, "--cpu-prof", "--cpu-prof-dir", join(at.workDir, "profile", name)]
        : spawn.nodeArgs;
      const server = await startDeployedOn(snap, {
        ...spawn,
        nodeArgs: profiled,
        workDir: at.workDir,
        name,
        host: HOST,
        env,
      });
      const s = { requests: 0, runs: 0, socketErrors: 0, checks: 0 };
      sent.set(server.port, s);
      return started({ ...server, sent: s }, warm);
    },
    /** Stops a server it started (a later server may get its port: it is no longer counted). */
    async stop(child: ServerChild) {
      children.splice(children.indexOf(child), 1);
      sent.delete(child.port);
      await child.stop();
    },
  };
  const stopAll = async () => {
    for (const child of children.splice(0).reverse()) await child.stop().catch(() => undefined);
  };
  return { bench, stopAll };
}

/** The product detail and the sale list, identity and br, as our server sent them. */
export type Reference = Record<"productId" | "productBr" | "listId" | "listBr", RawResponse>;

/**
 * Fetches the benchmarked responses from our server at `base` and checks them against the snapshot: a 401 without a
 * key; the product's bodies are its blobs in the pack, byte for byte; the list has the snapshot's sales and size; a
 * brotli body decodes to the identity one.
 */
export async function fetchReference(b: ServeBench, base: string, who: string): Promise<Reference> {
  const { product, list, key } = b.snap;
  const get = async (path: string, encoding: "identity" | "br", what: string) => {
    const headers: Record<string, string> = encoding === "br" ? { "Accept-Encoding": "br" } : {};
    const fetch = () => b.get(`${base}${path}?apikey=${key}`, headers);
    // A composed sale list is compressed in the background at start-up: wait for its brotli body.
    const res = encoding === "br" ? await waitForBrotli(fetch, `${who} ${what} (br)`) : await fetch();
    expectOk(res, `${who} ${what} (${encoding})`, encoding);
    return res;
  };
  const unauth = await b.get(base + product.path);
  expect(unauth.status === 401, `${who} without a key: status ${unauth.status}, expected 401 (is the key check on?)`);
  const productId = await get(product.path, "identity", "product");
  const productBr = await get(product.path, "br", "product");
  expectSameBytes(productId.body, product.identity, `${who} product body vs its blob in the snapshot's pack`);
  const detail = JSON.parse(productId.body.toString()) as { product?: string };
  expect(detail.product?.endsWith(product.path) === true, `${who} product body is not that product's detail`);
  expectSameBytes(productBr.body, product.br, `${who} product (br) vs its brotli blob in the pack`);
  const listId = await get(list.path, "identity", "sale list");
  const listBr = await get(list.path, "br", "sale list");
  const sales = (JSON.parse(listId.body.toString()) as { sales?: unknown[] }).sales?.length;
  const listText = `${who} sale list has ${sales} sales in ${listId.body.length} bytes, the snapshot ${list.sales} in ${list.size}`;
  expect(sales === list.sales && listId.body.length === list.size, listText);
  expectSameBytes(decodeBody(productBr, who).identity, productId.body, `${who} product (br), decoded, vs identity`);
  expectSameBytes(decodeBody(listBr, who).identity, listId.body, `${who} sale list (br), decoded, vs identity`);
  return { productId, productBr, listId, listBr };
}

/** Writes the reference bodies to files, with their headers minus those node:http adds itself, for a bare server. */
export async function bareRoutes(b: ServeBench, ref: Reference, who: string): Promise<BareRoute[]> {
  const body = async (name: keyof Reference) => {
    const file = join(b.workDir, `bare-${who}-${name}`);
    await writeFile(file, ref[name].body);
    return { file, headers: replayableHeaders(ref[name]) };
  };
  const q = `?apikey=${b.snap.key}`;
  return [
    { url: b.snap.product.path + q, identity: await body("productId"), br: await body("productBr") },
    { url: b.snap.list.path + q, identity: await body("listId"), br: await body("listBr") },
  ];
}

/**
 * The request logs of stopped as-deployed servers: each must have a line for every request wrk completed and every
 * check, and may have more: when wrk stops a run it closes its connections with at most one request in flight on each
 * (it does not pipeline), which the server answers and logs though wrk never counts it. So lines - completed - checks
 * is within [0, runs x connections], widened by wrk's socket errors. A server that did not exit cleanly may have lost
 * its last lines (FAIL); anything else it said on stderr is a WARN.
 */
export async function logVerdicts(servers: readonly Deployed[], connections: number): Promise<Verdict[]> {
  const out: Verdict[] = [];
  for (const server of servers) {
    const { logFile, sent: s } = server;
    const count = await countLogLines(logFile);
    const [expected, slack] = [s.requests + s.checks, s.runs * connections + s.socketErrors];
    const statuses = [...count.statuses].sort(([a], [b]) => a - b).map(([st, n]) => `${st}: ${fmtInt(n)}`);
    const text = `as-deployed request log has a line per request answered: ${fmtInt(count.lines)} lines; wrk completed ${fmtInt(s.requests)} requests in ${s.runs} runs, plus ${s.checks} single requests: ${fmtInt(expected)}; lines - that = ${fmtInt(count.lines - expected)}, within [0, ${fmtInt(slack)}] (runs x ${connections} connections, at most one request in flight on each when wrk stops${s.socketErrors ? `, + ${fmtInt(s.socketErrors)} socket errors` : ""}); ${fmtBytes(count.bytes)}, by status ${statuses.join(", ") || "none"}${count.other ? `, ${fmtInt(count.other)} lines without a status` : ""}; ${logFile}`;
    out.push(verdict(count.lines >= expected && count.lines <= expected + slack, text));
    const exited = server.exit();
    const code = exited ? (exited.signal ?? `code ${exited.code}`) : "still running";
    const lost = `an as-deployed server did not exit cleanly after SIGTERM (${code}): its last log lines may be lost (${logFile})`;
    if (code !== "code 0") out.push(verdict(false, lost));
    const said = server
      .stderr()
      .split("\n")
      .filter((l) => l.trim() && !/^serve: (listening on|SIGTERM|now serving)/.test(l));
    const other = `an as-deployed server wrote other lines on stderr, e.g.: ${said.slice(0, 3).join(" | ").slice(0, 900)}`;
    out.push(...note("WARN", other, said.length > 0));
  }
  return out;
}
