// `npm run fuzz`: >= 100,000 generated requests against the real server in a child process; fails on a 5xx, a slow answer, a crash or a leak.
// About one request in five asks for a sale list (sometimes another resource) with an affid or callback no earlier
// request had (kind `new-variant`): work or memory spent per new variant shows as answers over 1 s, RSS growth,
// or RSS past the ceiling, which stops the run.
//
//   tsx scripts/fuzz.ts [--seed 1] [--requests 100000] [--concurrency 32] [--products 2000] [--time-limit 300]
//
// Only 127.0.0.1 is attacked. Requests whose key is intact go out from 127.0.0.1; those that spend the
// failed-authentication budget (bad keys, raw bytes, odd methods) from 127.0.1.x, so that the per-address
// limit does not turn the rest of the run into 401s.
import { parseArgs } from "node:util";
import { fuzzRequest, variantWarmUp } from "./lib/fuzz-requests.ts";
import type { FuzzKind, FuzzMaterial, FuzzRequest } from "./lib/fuzz-requests.ts";
import { buildRequest, KeepAliveConnection, NoResponseError, rawRequest } from "./lib/raw-http.ts";
import type { RawResponse } from "./lib/raw-http.ts";
import { SOAK_BUDGET_MB } from "./lib/soak.ts";
import { cpuSeconds, rssMb } from "./lib/proc.ts";
import { freePort, HOST, prepareData, quantile, startServerChild } from "./lib/server-child.ts";
import { runMain } from "./lib/run-main.ts";

const { values: args } = parseArgs({
  options: {
    seed: { type: "string", default: "1" },
    requests: { type: "string", default: "100000" },
    concurrency: { type: "string", default: "32" },
    products: { type: "string", default: "2000" },
    "time-limit": { type: "string", default: "300" },
  },
});
const SEED = Number(args.seed);
const TOTAL = Number(args.requests);
const CONCURRENCY = Number(args.concurrency);
const TIME_LIMIT_MS = Number(args["time-limit"]) * 1000;
/** A response slower than this fails the run. */
const SLOW_MS = 1000;
/** RSS may grow this much (MB) from the first to the last third of the second half of the run before it counts as a leak. */
const RSS_SLACK_MB = 32;
const RSS_SLACK_SHARE = 0.15;
/** The run stops and fails when the server's RSS passes this (the soak's budget for the larger sample catalog). */
const RSS_CEILING_MB = SOAK_BUDGET_MB;

const log = (line: string) => process.stdout.write(line + "\n");
const redact = (s: string, key: string) => s.replaceAll(key, "<key>");
const show = (b: Buffer, key: string, n = 160) => JSON.stringify(redact(b.subarray(0, n).toString("latin1"), key));

async function main(): Promise<number> {
  const started = Date.now();
  const port = await freePort();
  log(`fuzz: seed ${SEED}, ${TOTAL} requests, concurrency ${CONCURRENCY}, ${args.products} products`);
  const data = await prepareData({ products: Number(args.products), seed: SEED, port });
  const server = await startServerChild({ dataDir: data.dataDir, keysFile: data.keysFile, port });
  let exitCode = 0;
  try {
    log(
      `fuzz: server pid ${server.pid} on ${HOST}:${port}; snapshot of ${data.paths.length} resources (setup ${((Date.now() - started) / 1000).toFixed(1)} s)`,
    );
    const rssStart = rssMb(server.pid);

    // ETags to send back in If-None-Match: fetched once, so that request i stays a function of (seed, i).
    const etags: string[] = [];
    for (const path of data.paths.filter((_, i) => i % Math.ceil(data.paths.length / 40) === 0)) {
      for (const ae of ["identity", "gzip", "br"]) {
        const res = await rawRequest(
          port,
          buildRequest("GET", `${path}?apikey=${data.key}`, [
            ["Host", HOST],
            ["Accept-Encoding", ae],
            ["Connection", "close"],
          ]),
        );
        if (res.headers["etag"]) etags.push(res.headers["etag"]);
      }
    }
    const lists = data.paths.filter((p) => p.endsWith("/active.json") || p.endsWith("/upcoming.json"));
    const others = data.paths.filter((p, i) => !lists.includes(p) && i % Math.ceil(data.paths.length / 30) === 0);
    const material: FuzzMaterial = {
      key: data.key,
      paths: data.paths,
      words: data.words,
      brands: data.brands,
      sizeKeys: data.sizeKeys,
      etags: [...new Set(etags)],
      variantPaths: [...lists, ...others],
      listPaths: lists,
    };

    // Warm-up: every affid/JSONP variant the generator can ask for, so that the variant cache is as full as it
    // will get before memory is measured (new variants, which are never asked for twice, it need not hold).
    const warm = variantWarmUp(material);
    let conn = new KeepAliveConnection(port);
    for (const target of warm) {
      if (conn.closed) conn = new KeepAliveConnection(port);
      await conn.send(buildRequest("GET", `${target}apikey=${data.key}`, [["Host", HOST]]), false);
    }
    conn.close();
    const rssWarm = rssMb(server.pid);
    log(
      `fuzz: warm-up: ${warm.length} affid/JSONP variants of ${material.variantPaths.length} resources; RSS ${rssStart.toFixed(1)} MB at start, ${rssWarm.toFixed(1)} MB after warm-up`,
    );

    const statuses = new Map<string, number>();
    const byKind = new Map<FuzzKind, Map<string, number>>();
    const latencies = new Float64Array(TOTAL);
    const failures: string[] = [];
    const drops: string[] = [];
    const slow: Array<[number, string]> = [];
    let sent = 0;
    let done = 0;
    let reconnects = 0;
    const bump = (map: Map<string, number>, k: string) => map.set(k, (map.get(k) ?? 0) + 1);
    const samples: Array<{ t: number; done: number; rss: number }> = [];
    const ceiling = { hitMb: 0 }; // a field, not a let: TypeScript would narrow a let set only in a callback to its initial value
    const sampler = setInterval(() => {
      const rss = rssMb(server.pid);
      samples.push({ t: Date.now(), done, rss });
      if (rss > RSS_CEILING_MB && !ceiling.hitMb) ceiling.hitMb = rss;
    }, 2000);
    const deadline = started + TIME_LIMIT_MS;
    let timedOut = false;

    const worker = async (w: number) => {
      const conns: Record<"clean" | "dirty", KeepAliveConnection | null> = { clean: null, dirty: null };
      const address = { clean: HOST, dirty: `127.0.1.${w + 1}` };
      for (;;) {
        if (Date.now() > deadline) {
          timedOut = true;
          break;
        }
        if (ceiling.hitMb) break;
        const i = sent++;
        if (i >= TOTAL) break;
        const req: FuzzRequest = fuzzRequest(SEED, i, material);
        const side = req.clean ? "clean" : "dirty";
        const t0 = performance.now();
        let res: RawResponse | null = null;
        try {
          if (req.kind === "framing") {
            res = await rawRequest(port, req.bytes, { isHead: req.isHead, timeoutMs: 5000 });
          } else {
            let c = conns[side];
            if (!c || c.closed) {
              if (c) reconnects++;
              c = conns[side] = new KeepAliveConnection(port, HOST, address[side]);
            }
            res = await c.send(req.bytes, req.isHead);
            c.history.push(`#${i} -> ${res.status}: ${show(req.bytes, data.key, 300)}`);
            if (c.history.length > 3) c.history.shift();
          }
        } catch (err) {
          if (!(err instanceof NoResponseError)) throw err;
          const c = req.kind === "framing" ? null : conns[side];
          c?.close();
          const on = c ? `, request ${c.requests} on its connection${c.lastError ? `, ${c.lastError}` : ""}` : "";
          const why = `#${i} ${req.kind} ${req.method}: ${err.message} after ${(performance.now() - t0).toFixed(0)} ms (${err.received.length} bytes received${on}): ${show(req.bytes, data.key)}${c?.history.length ? `\n      previous on that connection: ${c.history.at(-1)}` : ""}`;
          // node drops CONNECT (a tunnel request) without an answer when nothing listens for it: counted, reported, not a crash.
          if (req.method === "CONNECT") drops.push(why);
          else failures.push(`no response: ${why}`);
        }
        const ms = performance.now() - t0;
        latencies[i] = ms;
        done++;
        const status = res ? String(res.status) : "none";
        bump(statuses, status);
        if (!byKind.has(req.kind)) byKind.set(req.kind, new Map());
        bump(byKind.get(req.kind)!, status);
        if (res && res.status >= 500)
          failures.push(
            `${res.status} for #${i} ${req.kind}: ${show(req.bytes, data.key)} -> ${show(res.body, data.key)}`,
          );
        if (ms > SLOW_MS && res)
          failures.push(`slow: ${ms.toFixed(0)} ms for #${i} ${req.kind}: ${show(req.bytes, data.key)}`);
        if (slow.length < 5 || ms > slow[slow.length - 1]![0]) {
          slow.push([ms, `#${i} ${req.kind} -> ${status}: ${show(req.bytes, data.key)}`]);
          slow.sort((a, b) => b[0] - a[0]).splice(5);
        }
        if (server.exit()) break;
        if (done % 20_000 === 0)
          log(
            `fuzz: ${done} done, ${((Date.now() - started) / 1000).toFixed(0)} s, RSS ${rssMb(server.pid).toFixed(1)} MB`,
          );
      }
      conns.clean?.close();
      conns.dirty?.close();
    };
    const runStart = Date.now();
    const cpuStart = { server: cpuSeconds(server.pid), client: process.cpuUsage() };
    await Promise.all(Array.from({ length: CONCURRENCY }, (_, w) => worker(w)));
    const runMs = Date.now() - runStart;
    const cpuEnd = cpuSeconds(server.pid);
    const cpu = {
      server: cpuEnd !== null && cpuStart.server !== null ? cpuEnd - cpuStart.server : null,
      client: (() => {
        const u = process.cpuUsage(cpuStart.client);
        return (u.user + u.system) / 1e6;
      })(),
    };
    clearInterval(sampler);
    samples.push({ t: Date.now(), done, rss: rssMb(server.pid) });
    const rssEnd = rssMb(server.pid);

    const sorted = Float64Array.from(latencies.subarray(0, done)).sort();
    const fmt = (m: Map<string, number>) =>
      [...m]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => `${k}: ${v}`)
        .join(", ");
    log(
      `fuzz: ${done} requests in ${(runMs / 1000).toFixed(1)} s (${Math.round(done / (runMs / 1000))}/s), ${reconnects} reconnections; CPU used: server ${cpu.server === null ? "n/a" : `${cpu.server.toFixed(1)} s`}, fuzzer ${cpu.client.toFixed(1)} s`,
    );
    log(`status counts: ${fmt(statuses)}`);
    for (const [kind, m] of [...byKind].sort(([a], [b]) => a.localeCompare(b)))
      log(`  ${kind.padEnd(12)} ${[...m.values()].reduce((a, b) => a + b, 0)}: ${fmt(m)}`);
    log(
      `latency ms: p50 ${quantile(sorted, 0.5).toFixed(2)}, p90 ${quantile(sorted, 0.9).toFixed(2)}, p99 ${quantile(sorted, 0.99).toFixed(2)}, p99.9 ${quantile(sorted, 0.999).toFixed(2)}, max ${(sorted[sorted.length - 1] ?? NaN).toFixed(2)}`,
    );
    log("slowest:");
    for (const [ms, what] of slow) log(`  ${ms.toFixed(1)} ms  ${what}`);

    // Memory: leaving out the first half of the run (V8's heap and node's pools settle: with new-variant traffic
    // a server that does not leak climbed for some 50,000 requests, then saw-toothed), compare the mean RSS
    // of the last third of the samples with the first third.
    const measured = samples.filter((s) => !Number.isNaN(s.rss) && s.done >= TOTAL / 2);
    const third = Math.max(1, Math.floor(measured.length / 3));
    const mean = (xs: typeof measured) => xs.reduce((a, s) => a + s.rss, 0) / xs.length;
    const first = mean(measured.slice(0, third));
    const last = mean(measured.slice(-third));
    const allowed = Math.max(RSS_SLACK_MB, first * RSS_SLACK_SHARE);
    log(
      `RSS MB: start ${rssStart.toFixed(1)}, after warm-up ${rssWarm.toFixed(1)}, end ${rssEnd.toFixed(1)}; ${measured.length} samples, first third mean ${first.toFixed(1)}, last third mean ${last.toFixed(1)} (allowed growth ${allowed.toFixed(1)})`,
    );
    log(`RSS samples (MB, every 2 s): ${samples.map((s) => s.rss.toFixed(0)).join(" ")}`);
    if (measured.length >= 3 && last - first > allowed)
      failures.push(`memory keeps growing: ${first.toFixed(1)} MB -> ${last.toFixed(1)} MB`);
    if (drops.length) log(`dropped without an answer (CONNECT): ${drops.length}, e.g. ${drops[0]}`);

    if (ceiling.hitMb)
      failures.push(
        `RSS ${ceiling.hitMb.toFixed(0)} MB passed the ceiling of ${RSS_CEILING_MB} MB after ${done} requests: run stopped`,
      );
    if (server.exit())
      failures.push(`the server exited during the run: ${JSON.stringify(server.exit())}\n${server.stderr()}`);
    if (timedOut) failures.push(`time limit of ${TIME_LIMIT_MS / 1000} s reached after ${done} requests`);
    if (done < TOTAL) failures.push(`only ${done} of ${TOTAL} requests were answered`);
    const unexpected = server
      .stderr()
      .split("\n")
      .filter((l) => l && !l.startsWith("serve: listening on"));
    if (unexpected.length) log(`server stderr:\n  ${unexpected.slice(0, 20).join("\n  ")}`);
    if (failures.length) {
      log(`FAIL: ${failures.length} problem(s):`);
      for (const f of failures.slice(0, 10)) log(`  ${f}`);
      if (failures.length > 10) log(`  ... and ${failures.length - 10} more`);
      exitCode = 1;
    } else {
      log("PASS: no 5xx, no answer over 1 s, no restart, no memory growth");
    }
  } finally {
    await server.stop();
    await data.cleanup();
  }
  return exitCode;
}

runMain("fuzz", main);
