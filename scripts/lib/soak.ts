// The memory soak: the real server in a child process under variant-heavy traffic (a new affid or JSONP callback
// on most requests), its RSS sampled every second, and a verdict on it.
//
// The run fails when:
//  - RSS exceeds the budget (`budgetMb`, default SOAK_BUDGET_MB) in any sample, during the traffic or after it;
//    the traffic stops at the first such sample;
//  - RSS keeps rising over the second half of the traffic. The window is the samples of the second half taken
//    once the server has answered WARMUP_REQUESTS (its bounded caches fill per request, not per second: a slow,
//    CPU-starved run must not read a cache still filling as a leak). Rising: the least-squares slope over the
//    window is above RISE_SLOPE_MB_PER_S, AND the window's last half peaks above its first half's peak by more than
//    RISE_SLACK_MB (both, so that neither a GC sawtooth nor one spike is a leak). Judged when the window holds at
//    least 4 samples; otherwise the report says it was not (the budget still applies);
//  - RSS rises by more than RISE_SLACK_MB above its last sample under traffic during the quiet seconds after it
//    (background work queued per request that outlives the traffic);
//  - any 5xx, socket error, response that has not come 10 s after the traffic ended, or the server exiting;
//  - any 4xx but 404 (a sale or product that ended since the build): the traffic must be what a valid key sends.
import { createRandom } from "../../src/catalog/sample/random.ts";
import { buildRequest, KeepAliveConnection } from "./raw-http.ts";
import { rssMb } from "./proc.ts";
import { freePort, HOST, prepareData, quantile, startServerChild } from "./server-child.ts";

/** RSS budget (MB) of a server of the sample catalog (6,000 products) under any traffic a valid key can send. */
export const SOAK_BUDGET_MB = 512;
/** The sample catalog's size, as `npm start` serves it. */
export const SOAK_PRODUCTS = 6000;
/** RSS slope (MB/s) over the judged window above which RSS counts as rising (with RISE_SLACK_MB). */
const RISE_SLOPE_MB_PER_S = 1;
/**
 * Growth (MB) of the window's second-half peak over its first-half peak (or after the traffic) that counts as
 * rising. Above the GC sawtooth of a server that does not leak: its RSS climbed up to 2 MB/s for 20 s before a
 * collection, so a half-window on such an edge can peak some 25 MB above the other.
 */
const RISE_SLACK_MB = 32;
/**
 * Requests answered before RSS is judged for a rise. In calibration runs (a server that keeps no per-variant
 * work) RSS levelled after about 10,000 requests, whether they took 5 s or 12 s: its remembered request targets
 * (10,000) and its variant caches are full by then.
 */
const WARMUP_REQUESTS = 15_000;
/** Responses still missing this long after the traffic ended are failures, and their connections are closed. */
const LATE_MS = 10_000;

export interface SoakOptions {
  /** Seconds of traffic. Default 60. */
  seconds?: number;
  /** RSS budget in MB. Default SOAK_BUDGET_MB. */
  budgetMb?: number;
  /** Keep-alive connections, each with one request in flight. Default 24. */
  concurrency?: number;
  /** Products in the sample catalog. Default SOAK_PRODUCTS. */
  products?: number;
  /** Seed of the catalog and of the traffic. Default 1. */
  seed?: number;
  /** Share of requests with a new affid and/or callback; 0 makes a control run of cached variants only. Default 0.85. */
  freshShare?: number;
  /**
   * Responses before RSS is judged for a rise. Default WARMUP_REQUESTS. Infinity judges no rise: for a run too
   * short to outlast the warm-up (the bounded caches filling, the heap growing to its working size, which took over
   * 20 s under Node 24 in CI), where only the budget, the errors and the quiet seconds are judged.
   */
  warmupRequests?: number;
  /** Quiet seconds sampled after the traffic. Default seconds / 10, within 2..10. */
  quietSeconds?: number;
  /** Progress and report lines. Default: none. */
  onLine?: (line: string) => void;
}

export interface RssSample {
  /** Seconds since the traffic started. */
  t: number;
  mb: number;
  /** Responses received by then. */
  requests: number;
}

export interface SoakResult {
  /** Empty when the run passed. */
  failures: string[];
  /** Samples under traffic, and in the quiet seconds after it. */
  samples: RssSample[];
  quiet: RssSample[];
  rss: { start: number; end: number; max: number };
  requests: number;
  loadSeconds: number;
}

/** Least-squares slope of mb over t. */
function slope(samples: readonly RssSample[]): number {
  const n = samples.length;
  const mt = samples.reduce((a, s) => a + s.t, 0) / n;
  const mm = samples.reduce((a, s) => a + s.mb, 0) / n;
  let num = 0;
  let den = 0;
  for (const s of samples) {
    num += (s.t - mt) * (s.mb - mm);
    den += (s.t - mt) ** 2;
  }
  return den > 0 ? num / den : 0;
}

/** The samples judged for a rise: the second half's, from the first with `warmupRequests` answered. */
function riseWindow(samples: readonly RssSample[], loadSeconds: number, warmupRequests = WARMUP_REQUESTS): RssSample[] {
  return samples.filter((s) => s.t >= loadSeconds / 2 && s.requests >= warmupRequests);
}

/** The memory verdict (see the header): failures, each one line; empty when RSS stayed in budget and level. */
export function judgeRss(
  samples: readonly RssSample[],
  quiet: readonly RssSample[],
  loadSeconds: number,
  budgetMb: number,
  warmupRequests = WARMUP_REQUESTS,
): string[] {
  const failures: string[] = [];
  const over = [...samples, ...quiet].find((s) => s.mb > budgetMb);
  if (over)
    failures.push(`RSS ${over.mb.toFixed(0)} MB exceeded the budget of ${budgetMb} MB at ${over.t.toFixed(0)} s`);
  const window = riseWindow(samples, loadSeconds, warmupRequests);
  if (window.length >= 4) {
    const mid = (window[0]!.t + window.at(-1)!.t) / 2;
    const peak = (xs: readonly RssSample[]) => Math.max(...xs.map((s) => s.mb));
    const early = peak(window.filter((s) => s.t < mid));
    const late = peak(window.filter((s) => s.t >= mid));
    const rate = slope(window);
    if (rate > RISE_SLOPE_MB_PER_S && late - early > RISE_SLACK_MB) {
      failures.push(
        `RSS keeps rising: ${rate.toFixed(1)} MB/s from ${window[0]!.t.toFixed(0)} s to ${window.at(-1)!.t.toFixed(0)} s (limit ${RISE_SLOPE_MB_PER_S}), peak ${early.toFixed(0)} MB then ${late.toFixed(0)} MB (slack ${RISE_SLACK_MB} MB)`,
      );
    }
  }
  const last = samples.at(-1);
  if (last && quiet.length) {
    const peak = Math.max(...quiet.map((s) => s.mb));
    if (peak - last.mb > RISE_SLACK_MB)
      failures.push(
        `RSS kept rising after the traffic stopped: ${last.mb.toFixed(0)} MB -> ${peak.toFixed(0)} MB in ${quiet.length} s without a request`,
      );
  }
  return failures;
}

type RequestType = "list-all" | "list-store" | "sale" | "product" | "search" | "categories" | "sizes";
/** Weights: heavy on sale lists, the largest bodies, whose variants are composed and compressed per affid. */
const TYPES: Array<[RequestType, number]> = [
  ["list-all", 30],
  ["list-store", 25],
  ["sale", 10],
  ["product", 12],
  ["search", 13],
  ["categories", 5],
  ["sizes", 5],
];
const ENCODINGS: Array<[string | null, number]> = [
  ["br, gzip", 40],
  ["gzip", 30],
  [null, 30],
];
/** affids and callbacks many clients share: cached variants, the traffic of a healthy day. */
const REGULAR_AFFIDS = ["partner1", "p_2", "a.b-c"];

function weighted<T>(r: number, table: ReadonlyArray<[T, number]>): T {
  let at = r * table.reduce((n, [, w]) => n + w, 0);
  for (const [v, w] of table) if ((at -= w) < 0) return v;
  return table[table.length - 1]![0];
}

/** Runs the soak (see the header) and returns its verdict; the server child is stopped and its data removed, whatever happens. */
export async function runSoak(options: SoakOptions = {}): Promise<SoakResult> {
  const seconds = options.seconds ?? 60;
  const budgetMb = options.budgetMb ?? SOAK_BUDGET_MB;
  const concurrency = options.concurrency ?? 24;
  const seed = options.seed ?? 1;
  const freshShare = options.freshShare ?? 0.85;
  const quietSeconds = options.quietSeconds ?? Math.min(10, Math.max(2, Math.round(seconds / 10)));
  const log = options.onLine ?? (() => undefined);

  const port = await freePort();
  const data = await prepareData({ products: options.products ?? SOAK_PRODUCTS, seed, port });
  // BASE_URL given, not inherited: vitest sets it to "/" in its own environment.
  const server = await startServerChild({
    dataDir: data.dataDir,
    keysFile: data.keysFile,
    port,
    env: { BASE_URL: `http://${HOST}:${port}` },
  }).catch(async (err: unknown) => {
    await data.cleanup();
    throw err;
  });
  try {
    const byType = new Map<RequestType, string[]>([
      ["list-all", data.paths.filter((p) => /^\/v1\/sales\/(active|upcoming)\.json$/.test(p))],
      ["list-store", data.paths.filter((p) => /^\/v1\/sales\/[^/]+\/(active|upcoming)\.json$/.test(p))],
      ["sale", data.paths.filter((p) => /^\/v1\/sales\/[^/]+\/[^/]+\/detail\.json$/.test(p))],
      ["product", data.paths.filter((p) => /^\/v1\/products\/\d+\/detail\.json$/.test(p))],
      ["categories", ["/v1/products/categories.json"]],
      ["sizes", ["/v1/products/sizes.json"]],
    ]);
    const rng = createRandom(seed);
    let fresh = 0;
    const nextRequest = (): { type: RequestType; bytes: Buffer } => {
      const type = weighted(rng.next(), TYPES);
      let target =
        type === "search"
          ? `/v1/products?q=${rng.pick(data.words)}&apikey=${data.key}`
          : `${rng.pick(byType.get(type)!)}?apikey=${data.key}`;
      if (rng.chance(freshShare)) {
        const n = (fresh++).toString(36);
        const r = rng.next();
        if (r < 0.8) target += `&affid=aff-${n}`;
        if (r >= 0.65) target += `&callback=${rng.chance(0.5) ? `cb_${n}` : `jQuery${n}.done`}`;
      } else if (rng.chance(0.5)) {
        target += `&affid=${rng.pick(REGULAR_AFFIDS)}`;
      }
      const encoding = weighted(rng.next(), ENCODINGS);
      return {
        type,
        bytes: buildRequest(
          "GET",
          target,
          encoding
            ? [
                ["Host", HOST],
                ["Accept-Encoding", encoding],
              ]
            : [["Host", HOST]],
        ),
      };
    };

    const failures: string[] = [];
    const stats = new Map<RequestType, { count: number; statuses: Map<number, number> }>();
    const latencies: number[] = [];
    let requests = 0;
    let reconnects = 0;
    let socketErrors = 0;
    let stopped = false;
    const connections = new Set<KeepAliveConnection>();

    const rssStart = rssMb(server.pid);
    log(
      `soak: server pid ${server.pid} on ${HOST}:${port}, ${data.paths.length} resources; ${seconds} s of traffic over ${concurrency} keep-alive connections, ${Math.round(freshShare * 100)}% with a new affid/callback; budget ${budgetMb} MB`,
    );
    log(`soak: RSS at start ${rssStart.toFixed(1)} MB`);

    const loadStart = Date.now();
    const loadEnd = loadStart + seconds * 1000;
    const samples: RssSample[] = [];
    const every = Math.min(seconds / 10, 60);
    let nextReport = every;
    const sampler = setInterval(() => {
      const t = (Date.now() - loadStart) / 1000;
      const mb = rssMb(server.pid);
      if (Number.isNaN(mb)) return;
      samples.push({ t, mb, requests });
      if (t + 0.5 >= nextReport) {
        log(
          `soak: ${t.toFixed(0).padStart(4)} s  RSS ${mb.toFixed(1).padStart(7)} MB  ${requests} requests (${Math.round(requests / t)}/s)`,
        );
        while (nextReport <= t + 0.5) nextReport += every;
      }
      if (mb > budgetMb && !stopped) {
        stopped = true;
        log(`soak: RSS ${mb.toFixed(1)} MB is over the budget of ${budgetMb} MB at ${t.toFixed(0)} s: traffic stopped`);
      }
    }, 1000);
    // However the server behaves, the run ends: connections still waiting LATE_MS after the end are closed.
    const lateTimer = setTimeout(
      () => {
        if (connections.size)
          failures.push(`${connections.size} response(s) still missing ${LATE_MS / 1000} s after the traffic ended`);
        for (const c of connections) c.close();
      },
      seconds * 1000 + LATE_MS,
    );

    const worker = async () => {
      let conn: KeepAliveConnection | null = null;
      while (!stopped && Date.now() < loadEnd && !server.exit()) {
        const { type, bytes } = nextRequest();
        if (!conn || conn.closed) {
          if (conn) reconnects++;
          conn = new KeepAliveConnection(port);
        }
        connections.add(conn);
        const t0 = performance.now();
        try {
          const res = await conn.send(bytes, false);
          latencies.push(performance.now() - t0);
          requests++;
          let s = stats.get(type);
          if (!s) stats.set(type, (s = { count: 0, statuses: new Map() }));
          s.count++;
          s.statuses.set(res.status, (s.statuses.get(res.status) ?? 0) + 1);
          if ((res.status >= 500 || (res.status >= 400 && res.status !== 404)) && failures.length < 20)
            failures.push(
              `${res.status} for ${type}: ${bytes.toString("latin1").split(" ")[1]!.replace(data.key, "<key>")}`,
            );
        } catch (err) {
          socketErrors++;
          if (failures.length < 20)
            failures.push(
              `socket error on ${type}: ${(err as Error).message}${conn.lastError ? ` (${conn.lastError})` : ""}`,
            );
          conn.close();
          if (socketErrors >= 20) stopped = true;
        } finally {
          connections.delete(conn);
        }
      }
      conn?.close();
    };
    await Promise.all(Array.from({ length: concurrency }, () => worker()));
    clearTimeout(lateTimer);
    clearInterval(sampler);
    const loadSeconds = (Date.now() - loadStart) / 1000;
    const rssEnd = rssMb(server.pid);
    if (!Number.isNaN(rssEnd)) samples.push({ t: loadSeconds, mb: rssEnd, requests });

    // Quiet seconds: RSS that still climbs without a request is work queued per request (the reported leak).
    const quiet: RssSample[] = [];
    const quietEnd = Date.now() + quietSeconds * 1000;
    while (Date.now() < quietEnd && !server.exit()) {
      await new Promise((r) => setTimeout(r, Math.min(1000, quietEnd - Date.now())));
      const mb = rssMb(server.pid);
      if (!Number.isNaN(mb)) quiet.push({ t: (Date.now() - loadStart) / 1000, mb, requests });
    }

    const max = Math.max(rssStart, ...samples.map((s) => s.mb), ...quiet.map((s) => s.mb));
    const sorted = Float64Array.from(latencies).sort();
    log(
      `soak: RSS MB: start ${rssStart.toFixed(1)}, end of traffic ${rssEnd.toFixed(1)}, after ${quiet.length} quiet s ${(quiet.at(-1)?.mb ?? NaN).toFixed(1)}, max ${max.toFixed(1)}`,
    );
    log(
      `soak: ${requests} requests in ${loadSeconds.toFixed(1)} s (${Math.round(requests / loadSeconds)}/s), ${reconnects} reconnections; latency ms p50 ${quantile(sorted, 0.5).toFixed(1)}, p99 ${quantile(sorted, 0.99).toFixed(1)}, max ${(sorted.at(-1) ?? NaN).toFixed(1)}`,
    );
    for (const [type] of TYPES) {
      const s = stats.get(type);
      if (!s) continue;
      const codes = [...s.statuses]
        .sort(([a], [b]) => a - b)
        .map(([k, v]) => `${k}: ${v}`)
        .join(", ");
      log(
        `  ${type.padEnd(11)} ${String(s.count).padStart(8)}  ${(s.count / loadSeconds).toFixed(0).padStart(6)}/s  ${codes}`,
      );
    }
    log(
      `soak: RSS samples (MB, every second): ${samples.map((s) => s.mb.toFixed(0)).join(" ")} | quiet: ${quiet.map((s) => s.mb.toFixed(0)).join(" ")}`,
    );

    const window = riseWindow(samples, loadSeconds);
    if (window.length < 4)
      log(
        `soak: RSS not judged for a rise: ${window.length} sample(s) in the second half after ${WARMUP_REQUESTS} requests (run longer)`,
      );
    else
      log(
        `soak: RSS judged for a rise from ${window[0]!.t.toFixed(0)} s to ${window.at(-1)!.t.toFixed(0)} s: ${slope(window).toFixed(2)} MB/s`,
      );
    failures.push(...judgeRss(samples, quiet, loadSeconds, budgetMb, options.warmupRequests));
    if (server.exit())
      failures.push(`the server exited: ${JSON.stringify(server.exit())}\n${server.stderr().slice(-2000)}`);
    if (requests === 0) failures.push("no request was answered");
    return { failures, samples, quiet, rss: { start: rssStart, end: rssEnd, max }, requests, loadSeconds };
  } finally {
    await server.stop();
    await data.cleanup();
  }
}
