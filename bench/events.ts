// Events benchmark (issue 24): one server as deployed (src/cli/serve.ts, default configuration, request logs on) holds
// --streams open GET /v1/events streams while --pollers clients ask for the active list once a second each, and a sale
// of the snapshot begins --lead seconds after it is built. Measured: how long after its instant `sale.begins` reaches
// each stream (p50, p99, max), when each polling client first saw the sale in the list, the polling clients' latency
// (their target: the serve benchmark's p99 < 5 ms), the server's RSS before and with the streams open, and, to judge
// the figures on a shared machine, the CPU time the server and the clients took around the instant and how long the
// server waited for its core.
// Run: npm run bench -- events [--streams 10000] [--pollers 1000] [--lead 60] [--after 5] [--stream-processes 1]
//        [--products N] [--seed N] [--profile] [--keep]
// The clients run in processes of their own (bench/events/clients.ts) pinned to the other core than the server's,
// over loopback: the kernel's work for both ends of a connection is done on the writer's core.
import { appendFile, mkdtemp, readFile, rm } from "node:fs/promises";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startClientsProcess, streamKeys, STREAMS_PER_KEY as PER_KEY } from "./lib/clients-process.ts";
import type { ReadyChild } from "../scripts/lib/spawn-ready.ts";
import { cpuSeconds, rssMb } from "../scripts/lib/proc.ts";
import { SERVER_NODE_FLAGS } from "../src/serve/http/server.ts";
import type { ClientsConfig, PollersResult, StreamsResult } from "./events/clients.ts";
import { summarizeProfiles } from "./lib/profile.ts";
import { CheckError, expect, runBench, httpGet, waitForBrotli } from "./lib/check.ts";
import { fmtInt, fmtMs, fmtX, note, verdict } from "./lib/report.ts";
import type { Verdict } from "./lib/report.ts";
import { countLogLines, loadNote, preflight, startDeployedOn } from "./lib/servers.ts";
import { prepareSnapshot } from "./lib/snapshot.ts";

const HOST = "127.0.0.1";
const repoRoot = join(import.meta.dirname, "..");
const LIST = "/v1/sales/active.json";
const SALE_KEY = "bench-flash";
/** Targets: sale.begins on every stream within 100 ms of its instant (p99); polling keeps the serve benchmark's p99. */
const TARGETS = { deliveryP99Ms: 100, pollP99Ms: 5 } as const;
const log = (msg: string) => process.stderr.write(`bench: ${msg}\n`);

const { values: args } = parseArgs({
  options: {
    streams: { type: "string", default: "10000" },
    pollers: { type: "string", default: "1000" },
    lead: { type: "string", default: "60" },
    after: { type: "string", default: "5" },
    // One process reads every stream: on one core, two spent 30% more per read (switching between them), and the
    // streams' clients must keep pace with the server's writes, or their own delay is what is measured.
    "stream-processes": { type: "string", default: "1" },
    products: { type: "string" },
    seed: { type: "string", default: "1" },
    keep: { type: "boolean", default: false },
    profile: { type: "boolean", default: false },
  },
});
const o = {
  streams: Number(args.streams),
  pollers: Number(args.pollers),
  lead: Number(args.lead),
  after: Number(args.after),
  processes: Math.max(1, Number(args["stream-processes"])),
};

/** The q-quantile of `xs` (nearest rank), or NaN when empty. */
function quantile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]! : NaN;
}
const stats = (xs: readonly number[]) => ({
  n: xs.length,
  p50: quantile(xs, 0.5),
  p99: quantile(xs, 0.99),
  max: xs.length ? Math.max(...xs) : NaN,
});

/** How long the main thread of `pid` has waited for a core while runnable (other processes ran), ms; NaN without /proc. */
async function runDelayMs(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/schedstat`, "utf8").catch(() => "")).split(" ");
  return fields.length >= 2 ? Number(fields[1]) / 1e6 : NaN;
}

/** The kernel's TCP socket memory (every socket of the host, both ends of loopback connections), bytes. */
async function tcpMemory(): Promise<number> {
  const m = /^TCP: .* mem (\d+)/m.exec(await readFile("/proc/net/sockstat", "utf8").catch(() => ""));
  return m ? Number(m[1]) * 4096 : NaN;
}

/** The sale measured, beginning at `instant` (epoch s) in the women's store, with no products of its own. */
const flashSale = (instant: number) => ({
  key: SALE_KEY,
  store: "women",
  name: "Benchmark flash sale",
  description: "Begins while the benchmark's streams are open.",
  begins: new Date(instant * 1000).toISOString().replace(".000Z", "Z"),
  ends: new Date((instant + 3600) * 1000).toISOString().replace(".000Z", "Z"),
  images: [{ url: "https://cdn.example-retailer.com/bench-flash.jpg", width: 600, height: 300 }],
  product_ids: [],
});

/** Starts a clients process (pinned to `core`) and gives its RESULT line, parsed, once it prints it. */
const startClients = (name: string, c: ClientsConfig, workDir: string, core: number | null) =>
  startClientsProcess<unknown>(name, c, {
    repoRoot,
    script: "bench/events/clients.ts",
    workDir,
    core,
    readyTimeoutMs: 300_000,
  });

async function main(): Promise<number> {
  const pre = preflight(repoRoot);
  const loadAtStart = loadNote();
  const workDir = await mkdtemp(join(tmpdir(), "fsa-bench-events-"));
  const children: ReadyChild[] = [];
  try {
    let instant = 0;
    log("writing the catalog and building the snapshot ...");
    const snap = await prepareSnapshot(workDir, {
      baseUrl: "https://api.example.test",
      seed: Number(args.seed),
      log,
      ...(args.products ? { products: Number(args.products) } : {}),
      edit: async (dir) => {
        instant = Math.ceil(Date.now() / 1000 + o.lead);
        // The sample's sales begin and end on the hour: the measured second holds this sale's event only.
        if (instant % 3600 < 5 || instant % 3600 > 3595) instant += 10;
        await appendFile(join(dir, "sales.ndjson"), JSON.stringify(flashSale(instant)) + "\n");
      },
    });
    const instantMs = instant * 1000;
    const reportAtMs = instantMs + o.after * 1000;
    log(`built in ${(snap.buildMs / 1000).toFixed(1)} s; the sale begins at ${new Date(instantMs).toISOString()}`);

    const keys = await streamKeys(snap.keysFile, o.streams, "events");
    const server = await startDeployedOn(snap, {
      core: pre.cores?.server ?? null,
      cwd: repoRoot,
      workDir,
      name: "events",
      host: HOST,
      nodeArgs: args.profile
        ? [...SERVER_NODE_FLAGS, "--cpu-prof", "--cpu-prof-dir", join(workDir, "profile")]
        : SERVER_NODE_FLAGS,
      env: { LOG_REQUESTS: "1" },
    });
    children.push(server);
    const base = `http://${HOST}:${server.port}`;
    const listUrl = `${base}${LIST}?apikey=${snap.key}`;
    await waitForBrotli(() => httpGet(listUrl, { "Accept-Encoding": "br" }), "the active list");
    const before = await httpGet(listUrl);
    expect(!before.body.includes(`"sale_key":"${SALE_KEY}"`), `${LIST} shows ${SALE_KEY} before its instant`);
    const rssLoaded = rssMb(server.pid);
    const startedMs = Date.now();
    const waitStart = await runDelayMs(server.pid);
    const clientCore = pre.cores?.wrk ?? null;
    const common = { host: HOST, port: server.port, saleKey: SALE_KEY, instantMs, reportAtMs };

    log(`starting ${o.pollers} polling clients ...`);
    const pollers = await startClients(
      "pollers",
      { ...common, mode: "pollers", key: snap.key, path: LIST, count: o.pollers },
      workDir,
      clientCore,
    );
    children.push(pollers.child);
    await new Promise((r) => setTimeout(r, 3000));
    const rssPolled = rssMb(server.pid);
    const tcpBefore = await tcpMemory();

    log(`opening ${o.streams} streams in ${o.processes} processes ...`);
    const opening = performance.now();
    const openingMs = Date.now();
    const share = Math.ceil(keys.length / o.processes);
    const streamers = await Promise.all(
      Array.from({ length: o.processes }, async (_, i) => {
        const mine = keys.slice(i * share, (i + 1) * share);
        const count = Math.min(mine.length * PER_KEY, o.streams - i * share * PER_KEY);
        const c = { ...common, mode: "streams" as const, keys: mine, count, perKey: PER_KEY };
        const s = await startClients(`streams-${i + 1}`, c, workDir, clientCore);
        children.push(s.child);
        return s;
      }),
    );
    const openSec = (performance.now() - opening) / 1000;
    const openedMs = Date.now();
    const left = (instantMs - Date.now()) / 1000;
    log(`${o.streams} streams open in ${openSec.toFixed(1)} s; ${left.toFixed(1)} s to the instant`);
    if (left < 3)
      throw new CheckError(`the streams were open only ${left.toFixed(1)} s before the instant: raise --lead`);
    await new Promise((r) => setTimeout(r, 2000));
    const rssStreams = rssMb(server.pid);
    const tcpStreams = await tcpMemory();

    // From 0.2 s before the instant to 1 s after it (as the clients measure theirs): the server's CPU time, and its
    // wait for its core (other processes ran on it: a shared machine).
    const sampleAt = (ms: number) =>
      new Promise<{ wait: number; cpu: number }>((r) =>
        setTimeout(
          () => void runDelayMs(server.pid).then((wait) => r({ wait, cpu: (cpuSeconds(server.pid) ?? NaN) * 1000 })),
          ms - Date.now(),
        ),
      );
    const [atStart, atEnd] = await Promise.all([sampleAt(instantMs - 200), sampleAt(instantMs + 1000)]);
    const byProcess = (await Promise.all(streamers.map((s) => s.result))) as StreamsResult[];
    const streamResults = byProcess.flatMap((r) => r.streams);
    const clientCpuMs = byProcess.reduce((sum, r) => sum + (r.cpuMs ?? NaN), 0);
    const polled = (await pollers.result) as PollersResult;
    const pollResults = polled.pollers;
    const rssAfter = rssMb(server.pid);
    const waitRun = (await runDelayMs(server.pid)) - waitStart;
    const after = await httpGet(listUrl);
    expect(after.body.includes(`"sale_key":"${SALE_KEY}"`), `${LIST} does not show ${SALE_KEY} after its instant`);
    for (const c of children.splice(0).reverse()) await c.stop();
    const logCount = await countLogLines(server.logFile);
    const serverMs: number[] = [];
    const serverMsNear: number[] = [];
    for (const line of (await readFile(server.logFile, "utf8")).split("\n")) {
      const m = /"time":"([^"]+)","method":"GET","path":"\/v1\/sales\/active\.json".*"ms":([\d.]+)/.exec(line);
      if (!m) continue;
      serverMs.push(Number(m[2]));
      const t = Date.parse(m[1]!);
      if (t >= instantMs && t < instantMs + 2000) serverMsNear.push(Number(m[2]));
    }

    const got = streamResults.filter((r) => r.receivedMs !== null);
    const delivery = stats(got.map((r) => r.receivedMs! - instantMs));
    const timer = stats(got.filter((r) => r.sentMs !== null).map((r) => r.sentMs! - instantMs));
    const ids = new Set(got.map((r) => r.id));
    const seen = pollResults.filter((r) => r.changedMs !== null).map((r) => r.changedMs! - instantMs);
    const firstSeen = stats(seen);
    const answers = pollResults.flatMap((r) => r.answers);
    /** Latencies of the answers to polls sent in [from, to). */
    const sentIn = (from: number, to: number) =>
      stats(answers.filter(([done, ms]) => done - ms >= from && done - ms < to).map((a) => a[1]));
    const alone = sentIn(0, openingMs);
    // From a second after the last stream opened (the streams' requests are over) to the end: the instant included.
    const latency = sentIn(openedMs + 1000, Infinity);
    const near = sentIn(instantMs, instantMs + 2000);
    const bad = answers.filter((a) => a[2] !== 200 && a[2] !== 304).length;
    const errors = pollResults.flatMap((r) => r.errors);
    const skipped = pollResults.reduce((n, r) => n + r.skipped, 0);
    const perStreamKb = ((rssStreams - rssPolled) * 1024) / o.streams;
    const row = (what: string, s: ReturnType<typeof stats>) =>
      `${what.padEnd(58)} ${fmtInt(s.n).padStart(7)} ${fmtMs(s.p50).padStart(8)} ${fmtMs(s.p99).padStart(8)} ${fmtMs(s.max).padStart(8)}`;
    const lines = [
      "",
      `events benchmark: ${fmtInt(o.streams)} open GET /v1/events streams (${keys.length} keys x ${PER_KEY}) and ${fmtInt(o.pollers)} clients polling ${LIST} once a second each (each its own keep-alive connection, Accept-Encoding: br, gzip, If-None-Match), all on one server as deployed (src/cli/serve.ts, default configuration, LOG_REQUESTS=1); a sale of the snapshot begins at ${new Date(instantMs).toISOString()}, ${o.lead} s after the build`,
      `pinning: ${pre.cores ? `server on core ${pre.cores.server}, clients (${o.processes} stream processes, 1 polling process) on core ${pre.cores.wrk} (taskset)` : "none"}; ${cpus().length} x ${cpus()[0]?.model ?? "unknown CPU"}; node ${process.version}`,
      `load at start: ${loadAtStart}`,
      `load at end:   ${loadNote()}`,
      `input: ${snap.catalogNote} and the measured sale; snapshot built in ${(snap.buildMs / 1000).toFixed(1)} s; streams opened in ${openSec.toFixed(1)} s`,
      ...pre.notes.map((n) => `note: ${n}`),
      "",
      `${"ms after the sale's instant (latency: ms)".padEnd(58)} ${"n".padStart(7)} ${"p50".padStart(8)} ${"p99".padStart(8)} ${"max".padStart(8)}`,
      row("sale.begins: the server's timer (the frame's `sent`)", timer),
      row("sale.begins reaches a stream", delivery),
      row("the sale first seen by a polling client (its first new list)", firstSeen),
      row("polling latency before the streams open (client side)", alone),
      row("polling latency with the streams open, instant included", latency),
      row("polling latency, polls sent in the 2 s from the instant", near),
      row("polling, the server's own time (request log `ms`)", stats(serverMs)),
      row("polling, the server's own time, in the 2 s from the instant", stats(serverMsNear)),
      "",
      `streams / polling, time to learn of the sale: p50 ${fmtX(delivery.p50 / firstSeen.p50)}, p99 ${fmtX(delivery.p99 / firstSeen.p99)}`,
      `server RSS: ${fmtInt(rssLoaded)} MB loaded, ${fmtInt(rssPolled)} MB with the pollers, ${fmtInt(rssStreams)} MB with ${fmtInt(o.streams)} streams open too (${fmtX(rssStreams / rssPolled)}), ${fmtInt(rssAfter)} MB after the event: ${perStreamKb.toFixed(1)} KB per open stream; kernel TCP memory (both ends, loopback) +${fmtInt((tcpStreams - tcpBefore) / 1024 / 1024)} MB`,
      `CPU from 0.2 s before the instant to 1 s after it: the server ${fmtInt(atEnd.cpu - atStart.cpu)} ms (the event to every stream, and the polls); on the clients' core, the streams' ${o.processes === 1 ? "process" : `${o.processes} processes`} ${fmtInt(clientCpuMs)} ms (reading the event: that part of the delay is theirs, not the server's) and the polling process ${fmtInt(polled.cpuMs ?? NaN)} ms (mostly the new list, once to each client, after the event)`,
      `noise: the server's main thread waited ${fmtMs(atEnd.wait - atStart.wait)} ms for its core while runnable (another process ran on it) in those 1.2 s, ${fmtInt(waitRun)} ms over the ${fmtInt((Date.now() - startedMs) / 1000)} s of the run`,
      `request log: ${fmtInt(logCount.lines)} lines, by status ${[...logCount.statuses].map(([s, n]) => `${s}: ${fmtInt(n)}`).join(", ")}; polls skipped (the previous one still out): ${fmtInt(skipped)}`,
      "",
    ];
    const verdicts: Verdict[] = [
      verdict(
        got.length === o.streams && streamResults.every((r) => r.times === 1 && !r.ended) && ids.size === 1,
        `every stream got the sale's sale.begins once, with one id for all (${fmtInt(got.length)} of ${fmtInt(o.streams)} got it; ${streamResults.filter((r) => r.times > 1).length} more than once; ${streamResults.filter((r) => r.ended).length} ended; ids: ${[...ids].slice(0, 3).join(", ")})`,
      ),
      verdict(
        delivery.p99 < TARGETS.deliveryP99Ms,
        `sale.begins p99 < ${TARGETS.deliveryP99Ms} ms after its instant at ${fmtInt(o.streams)} streams: ${fmtMs(delivery.p99)} ms (max ${fmtMs(delivery.max)} ms)`,
      ),
      verdict(
        seen.length === o.pollers,
        `every polling client saw the sale: ${fmtInt(seen.length)} of ${fmtInt(o.pollers)}`,
      ),
      verdict(
        bad === 0 && errors.length === 0 && latency.p99 < TARGETS.pollP99Ms,
        `polling keeps its target with the streams open, p99 < ${TARGETS.pollP99Ms} ms (the serve benchmark's), with no error: p99 ${fmtMs(latency.p99)} ms (${fmtMs(alone.p99)} ms before the streams), ${bad} answers not 200/304, errors: ${errors.slice(0, 3).join("; ") || "none"}`,
      ),
      ...note(
        "WARN",
        `in the 2 s from the instant the polling p99 was ${fmtMs(near.p99)} ms: a poll then may wait for the event's fan-out (written at a stretch up to 100 ms, src/serve/events/fan-out.ts) and for the first answers of the new list`,
        near.p99 >= TARGETS.pollP99Ms,
      ),
    ];
    process.stdout.write([...lines, ...verdicts.map((v) => v.line)].join("\n") + "\n");
    if (args.profile)
      process.stdout.write(
        `\nserver CPU profile (start to exit):\n${await summarizeProfiles(join(workDir, "profile"), repoRoot)}\n`,
      );
    return verdicts.every((v) => v.pass) ? 0 : 2;
  } finally {
    for (const c of children.reverse()) await c.stop().catch(() => undefined);
    if (args.keep) log(`kept ${workDir}`);
    else await rm(workDir, { recursive: true, force: true });
  }
}

runBench(main, log);
