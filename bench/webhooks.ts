// Webhooks benchmark (issue 38): 1,000 endpoints (50 organisations of 20, the portal's limit an organisation) on
// loopback receivers, subscribed to sale.begins, and a sale beginning. The API as deployed (src/cli/serve.ts, pinned
// to one core) and the portal as `npm run portal` runs it (src/cli/portal.ts, its own process, SQLite: DATABASE_URL a
// file in the run's temp dir, shared with the API's usage counts as by default; PORTAL_SECRET_KEY; WEBHOOKS_API_KEY a
// key of the API's keys file; WEBHOOKS_ALLOW=loopback, so plain http to 127.0.0.1). The endpoints are made in a
// template database with the functions the portal's form uses (insertEndpoint, secrets sealed by
// sealWebhookSecret), copied for each run. Receivers: --receivers node:http servers in this process (bench/webhooks/
// receivers.ts), each delivery's arrival timed; every 10th endpoint's deliveries verified with `standardwebhooks`.
// Measured, in --rounds rounds of two runs each (the order alternating; fresh processes and database for every run),
// a sale beginning in each, --lead-in s into wrk's --duration s on a product detail: with the burst (the 1,000
// endpoints), and without (the same portal and sale, no endpoints: the sale's own cost to the API is in both);
// - deliveries: arrival minus the sale's instant, p50/p99/max over the endpoints, and how many arrived (target p99 <
//   1 s, the median over the rounds);
// - the API's own latency: wrk's p99 with the burst over without it, per round, the median (target <= 1.10x);
// - the database's share of time: a CPU profile of the portal (node --cpu-prof), the samples from the instant to the
//   last arrival whose stack holds src/db/ or the SQLite driver (which runs each statement on the portal's main
//   thread), over that wall time (bench/webhooks/db-share.ts); also the portal's busy share, and who made the calls.
// Run: npm run bench -- webhooks [--endpoints 1000] [--receivers 4] [--rounds 3] [--duration 8] [--lead-in 2]
//        [--warmup 2] [--connections 64] [--portal-core other|server|none] [--build-allow 60] [--products N]
//        [--seed N] [--keep]
// The portal runs on the other core than the API's (with wrk and the receivers) by default: the API's latency is
// then what the burst costs it through the machine (its stream, the shared database file, memory), not a core
// shared with the portal; --portal-core server puts them on one core, as `npm start`'s one process would be.
import { copyFile, mkdir, mkdtemp, rm } from "node:fs/promises";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Webhook } from "standardwebhooks";
import { cpuSeconds } from "../scripts/lib/proc.ts";
import { freePort } from "../scripts/lib/server-child.ts";
import { spawnReady } from "../scripts/lib/spawn-ready.ts";
import type { ReadyChild } from "../scripts/lib/spawn-ready.ts";
import { openDatabase } from "../src/db/database.ts";
import { migrate } from "../src/db/migrations.ts";
import { createKey } from "../src/keys/keys-file.ts";
import { createAccount } from "../src/portal/store/accounts.ts";
import { insertEndpoint, newEndpointId } from "../src/portal/webhooks/endpoints.ts";
import { newWebhookSecret, sealWebhookSecret } from "../src/portal/webhooks/signing.ts";
import { SERVER_NODE_FLAGS } from "../src/serve/http/server.ts";
import { CheckError, expect, httpGet, runBench } from "./lib/check.ts";
import { fmtInt, fmtMs, fmtX, note, verdict } from "./lib/report.ts";
import type { Verdict } from "./lib/report.ts";
import { loadNote, preflight, startDeployedOn } from "./lib/servers.ts";
import { prepareSnapshot } from "./lib/snapshot.ts";
import { runWrk } from "./lib/wrk.ts";
import type { WrkResult } from "./lib/wrk.ts";
import { dbShare } from "./webhooks/db-share.ts";
import type { DbShare } from "./webhooks/db-share.ts";
import { startReceivers } from "./webhooks/receivers.ts";

const HOST = "127.0.0.1";
const repoRoot = join(import.meta.dirname, "..");
const TARGETS = { deliveryP99Ms: 1000, apiP99Ratio: 1.1 } as const;
/** Endpoints an organisation (the portal's MAX_ENDPOINTS). */
const PER_ORG = 20;
/** Every SAMPLE_EVERY-th endpoint's deliveries are verified with standardwebhooks. */
const SAMPLE_EVERY = 10;
/** Seconds a run has to start both processes (the portal compiles its TypeScript at start). */
const STARTUP_SEC = 12;
/** Seconds after the measured wrk run for the last deliveries and for stopping the processes. */
const TAIL_SEC = 8;
const log = (msg: string) => process.stderr.write(`bench: ${msg}\n`);
const sleepUntil = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms - Date.now())));

const { values: args } = parseArgs({
  options: {
    endpoints: { type: "string", default: "1000" },
    receivers: { type: "string", default: "4" },
    rounds: { type: "string", default: "3" },
    duration: { type: "string", default: "8" },
    "lead-in": { type: "string", default: "2" },
    warmup: { type: "string", default: "2" },
    connections: { type: "string", default: "64" },
    "portal-core": { type: "string", default: "other" },
    "build-allow": { type: "string", default: "60" },
    products: { type: "string" },
    seed: { type: "string", default: "1" },
    keep: { type: "boolean", default: false },
  },
});
const o = {
  endpoints: Number(args.endpoints),
  receivers: Number(args.receivers),
  rounds: Number(args.rounds),
  duration: Number(args.duration),
  leadIn: Number(args["lead-in"]),
  warmup: Number(args.warmup),
  connections: Number(args.connections),
  buildAllow: Number(args["build-allow"]),
};
const SLOT_SEC = STARTUP_SEC + o.warmup + o.duration + TAIL_SEC;

/** The q-quantile of `xs` (nearest rank), or NaN when empty. */
function quantile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]! : NaN;
}
const median = (xs: readonly number[]) => quantile(xs, 0.5);

/** A run's time slot: its processes start at `begin`, its instant (a sale's, or none's) at `instant` (epoch ms). */
interface Slot {
  round: number;
  burst: boolean;
  begin: number;
  instant: number;
}

/**
 * The runs' slots from `t0` (epoch s): per round a run with the burst and one without, the order alternating. The
 * sample's own sales begin and end on the hour: no slot holds an hour's turn, so only the benchmark's sale is sent.
 */
function planSlots(t0: number): Slot[] {
  const slots: Slot[] = [];
  let begin = t0;
  for (let round = 1; round <= o.rounds; round++)
    for (const burst of round % 2 ? [true, false] : [false, true]) {
      const hour = Math.ceil(begin / 3600) * 3600;
      if (hour <= begin + SLOT_SEC) begin = hour + 2;
      const instant = (begin + STARTUP_SEC + o.warmup + o.leadIn) * 1000;
      slots.push({ round, burst, begin: begin * 1000, instant });
      begin += SLOT_SEC;
    }
  return slots;
}

/** The sale of a slot, beginning at its instant in the women's store, with no products of its own. */
const saleOf = (slot: Slot, i: number) => ({
  key: `bench-webhooks-${i}`,
  store: "women",
  name: `Webhooks benchmark sale ${i}`,
  description: "Begins while the webhooks benchmark runs.",
  begins: new Date(slot.instant).toISOString().replace(".000Z", "Z"),
  ends: new Date(slot.instant + 3600_000).toISOString().replace(".000Z", "Z"),
  images: [{ url: "https://cdn.example-retailer.com/bench-webhooks.jpg", width: 600, height: 300 }],
  product_ids: [],
});

/** Makes `count` endpoints (as the portal's form does) in a new database at `path`; returns their secrets. */
async function makeEndpoints(
  path: string,
  count: number,
  secretKey: Buffer,
  urlOf: (n: number) => string,
): Promise<string[]> {
  const db = await openDatabase(path);
  const secrets: string[] = [];
  try {
    const now = Date.now();
    await migrate(db, now);
    let orgId = "";
    for (let n = 0; n < count; n++) {
      if (n % PER_ORG === 0) {
        const k = n / PER_ORG;
        const made = await createAccount(
          db,
          { email: `bench-${k}@example.test`, partner: `Partner ${k}`, password: "!" },
          now,
        );
        orgId = made!.id;
      }
      const id = newEndpointId();
      const secret = newWebhookSecret();
      secrets.push(secret);
      await insertEndpoint(db, {
        id,
        orgId,
        url: urlOf(n),
        types: ["sale.begins"],
        stores: [],
        affid: n % 3 === 0 ? `partner${n}` : "",
        secret: sealWebhookSecret(secretKey, id, secret),
        created: now,
        createdBy: `bench-${Math.floor(n / PER_ORG)}@example.test`,
      });
    }
  } finally {
    await db.close();
  }
  return secrets;
}

/** The portal's environment as an operator would set it: nothing of ours inherited but PATH and the like. */
function portalEnv(vars: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: "production" };
  for (const name of Object.keys(env))
    if (
      /^(PORTAL_|WEBHOOKS_|SMTP_|MAIL_|KEYS_|USAGE|REDIS_|TRUST_PROXY|DATABASE_URL|DATA_DIR|BASE_URL|HOST|PORT)/.test(
        name,
      )
    )
      delete env[name];
  return Object.assign(env, vars);
}

interface RunResult {
  slot: Slot;
  wrk: WrkResult;
  /** Deliveries: ms after the instant, by endpoint; ids seen; endpoints delivered more than once. */
  arrivals: number[];
  ids: Set<string>;
  repeats: number;
  /** Endpoints that got a delivery. */
  reached: number;
  /** Sampled deliveries whose signature did not verify (with why). */
  unverified: string[];
  verified: number;
  /** From the instant to the last arrival (a run with the burst). */
  db: DbShare | null;
  burstMs: number;
  /** The portal's CPU time over the burst, ms. */
  cpuMs: number | null;
}

async function main(): Promise<number> {
  const pre = preflight(repoRoot);
  const loadAtStart = loadNote();
  const workDir = await mkdtemp(join(tmpdir(), "fsa-bench-webhooks-"));
  const children: ReadyChild[] = [];
  const receivers = await startReceivers(o.receivers, (n) => n % SAMPLE_EVERY === 0);
  const portalCore =
    args["portal-core"] === "none" ? null : args["portal-core"] === "server" ? pre.cores?.server : pre.cores?.wrk;
  // Epoch ms to CLOCK_MONOTONIC us (the CPU profile's clock), read together.
  const monoUs = (() => {
    const [hr, epoch] = [Number(process.hrtime.bigint() / 1000n), performance.timeOrigin + performance.now()];
    return (epochMs: number) => hr + (epochMs - epoch) * 1000;
  })();
  try {
    const slots = planSlots(Math.ceil(Date.now() / 1000) + o.buildAllow);
    log(
      `writing the catalog and building the snapshot; the first run starts at ${new Date(slots[0]!.begin).toISOString()} ...`,
    );
    const snap = await prepareSnapshot(workDir, {
      baseUrl: "https://api.example.test",
      seed: Number(args.seed),
      log,
      ...(args.products ? { products: Number(args.products) } : {}),
      edit: async (dir) => {
        const { appendFile } = await import("node:fs/promises");
        await appendFile(join(dir, "sales.ndjson"), slots.map((s, i) => JSON.stringify(saleOf(s, i)) + "\n").join(""));
      },
    });
    const webhooksKey = await createKey(snap.keysFile, "portal-webhooks", new Date());
    const secretKey = randomBytes(32);
    const templates = { burst: join(workDir, "endpoints.db"), none: join(workDir, "no-endpoints.db") };
    const made = performance.now();
    const secrets = await makeEndpoints(templates.burst, o.endpoints, secretKey, receivers.urlOf);
    await makeEndpoints(templates.none, 0, secretKey, receivers.urlOf);
    log(
      `built in ${(snap.buildMs / 1000).toFixed(1)} s; ${o.endpoints} endpoints made in ${((performance.now() - made) / 1000).toFixed(1)} s`,
    );
    if (Date.now() > slots[0]!.begin)
      throw new CheckError(`the build and the endpoints took until after the first run's start: raise --build-allow`);

    const results: RunResult[] = [];
    for (const [i, slot] of slots.entries()) {
      const runDir = join(workDir, `run-${i}`);
      const profileDir = join(runDir, "profile");
      await mkdir(profileDir, { recursive: true });
      const dbFile = join(runDir, "portal.db");
      const template = slot.burst ? templates.burst : templates.none;
      for (const end of ["", "-wal"]) if (existsSync(template + end)) await copyFile(template + end, dbFile + end);
      await sleepUntil(slot.begin);
      const api = await startDeployedOn(snap, {
        core: pre.cores?.server ?? null,
        cwd: repoRoot,
        workDir: runDir,
        name: "api",
        host: HOST,
        nodeArgs: SERVER_NODE_FLAGS,
        env: { DATABASE_URL: dbFile },
      });
      children.push(api);
      const portal = await spawnReady({
        name: "portal (src/cli/portal.ts)",
        script: join(repoRoot, "src", "cli", "portal.ts"),
        cwd: repoRoot,
        nodeArgs: ["--cpu-prof", "--cpu-prof-dir", profileDir],
        env: portalEnv({
          HOST,
          PORTAL_PORT: String(await freePort()),
          DATA_DIR: snap.dataDir,
          KEYS_FILE: snap.keysFile,
          DATABASE_URL: dbFile,
          BASE_URL: `http://${HOST}:${api.port}`,
          PORTAL_SECRET_KEY: secretKey.toString("base64"),
          WEBHOOKS_API_KEY: webhooksKey,
          WEBHOOKS_ALLOW: "loopback",
        }),
        core: portalCore ?? null,
        ready: { stream: "stdout", pattern: /serving the developer portal on http:\/\/127\.0\.0\.1:(\d+)/ },
        stopGraceMs: 20_000,
      });
      children.push(portal);
      const url = `http://${HOST}:${api.port}${snap.product.path}?apikey=${snap.key}`;
      expect((await httpGet(url)).status === 200, `${snap.product.path}: not 200`);
      const warmAt = slot.instant - (o.leadIn + o.warmup) * 1000;
      if (Date.now() > warmAt - 500)
        throw new CheckError(
          `run ${i + 1}: the processes took ${((Date.now() - slot.begin) / 1000).toFixed(1)} s to start, over ${STARTUP_SEC} s`,
        );
      await sleepUntil(warmAt);
      const wrk = { core: pre.cores?.wrk ?? null, connections: o.connections, headers: {} };
      if (o.warmup > 0) await runWrk(url, { ...wrk, duration: o.warmup });
      receivers.reset();
      const deadline = slot.instant + (o.duration - o.leadIn + TAIL_SEC / 2) * 1000;
      // The portal's CPU time from the instant until every endpoint has its delivery (to 20 ms, in 10 ms ticks).
      const portalCpu = (async () => {
        if (!slot.burst) return null;
        await sleepUntil(slot.instant);
        const before = cpuSeconds(portal.pid);
        while (receivers.arrivals.length < o.endpoints && Date.now() < deadline)
          await new Promise((r) => setTimeout(r, 20));
        const after = cpuSeconds(portal.pid);
        return before === null || after === null ? null : (after - before) * 1000;
      })();
      const measured = await runWrk(url, { ...wrk, duration: o.duration });
      while (slot.burst && receivers.arrivals.length < o.endpoints && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      const got = [...receivers.arrivals];
      for (const c of children.splice(0).reverse()) await c.stop();

      const byEndpoint = new Map<number, number>();
      for (const a of got) byEndpoint.set(a.endpoint, (byEndpoint.get(a.endpoint) ?? 0) + 1);
      const unverified: string[] = [];
      let verified = 0;
      for (const a of got.filter((x) => x.body !== undefined)) {
        try {
          const payload = new Webhook(secrets[a.endpoint]!).verify(a.body!, a.headers as Record<string, string>) as {
            type?: string;
          };
          if (payload.type !== "sale.begins") throw new Error(`type ${payload.type}`);
          verified++;
        } catch (err) {
          unverified.push(`endpoint ${a.endpoint}: ${(err as Error).message}`);
        }
      }
      const last = got.length ? Math.max(...got.map((a) => a.atMs)) : slot.instant;
      const db =
        slot.burst && got.length > 0 ? await dbShare(profileDir, repoRoot, monoUs(slot.instant), monoUs(last)) : null;
      results.push({
        slot,
        wrk: measured,
        arrivals: got.map((a) => a.atMs - slot.instant),
        ids: new Set(got.map((a) => a.id)),
        repeats: [...byEndpoint.values()].filter((n) => n > 1).length,
        reached: byEndpoint.size,
        unverified,
        verified,
        db,
        burstMs: last - slot.instant,
        cpuMs: await portalCpu,
      });
      const r = results.at(-1)!;
      log(
        `round ${slot.round} ${slot.burst ? "with the burst   " : "without the burst"}: ${got.length} deliveries, p99 ${fmtMs(quantile(r.arrivals, 0.99))} ms; API p99 ${fmtMs(measured.p99)} ms, ${fmtInt(measured.requestsPerSec)} req/s${db ? `; DB ${fmtInt(db.dbUs / 1000)} ms of ${fmtInt(r.burstMs)} ms` : ""}`,
      );
    }
    return report(results, pre, loadAtStart, snap.catalogNote, snap.product.path);
  } finally {
    for (const c of children.reverse()) await c.stop().catch(() => undefined);
    await receivers.close();
    if (args.keep) log(`kept ${workDir}`);
    else await rm(workDir, { recursive: true, force: true });
  }
}

function report(
  results: RunResult[],
  pre: ReturnType<typeof preflight>,
  loadAtStart: string,
  catalogNote: string,
  product: string,
): number {
  const withBurst = results.filter((r) => r.slot.burst);
  const without = results.filter((r) => !r.slot.burst);
  const pct = (part: number, whole: number) => `${((100 * part) / whole).toFixed(0)}%`;
  const header = [
    "round",
    "run",
    "delivered",
    "p50 ms",
    "p99 ms",
    "max ms",
    "API req/s",
    "API p50",
    "API p99",
    "portal CPU",
    "portal busy",
    "DB",
    "DB share",
  ];
  const rows = results.map((r) => {
    const d = r.slot.burst;
    const ms = (x: number) => (Number.isFinite(x) ? fmtMs(x) : "-");
    return [
      String(r.slot.round),
      d ? "with the burst" : "without",
      d ? `${fmtInt(r.reached)}/${fmtInt(o.endpoints)}` : "",
      d ? ms(quantile(r.arrivals, 0.5)) : "",
      d ? ms(quantile(r.arrivals, 0.99)) : "",
      d ? ms(Math.max(...r.arrivals)) : "",
      fmtInt(r.wrk.requestsPerSec),
      fmtMs(r.wrk.p50),
      fmtMs(r.wrk.p99),
      r.cpuMs === null ? "" : `${fmtInt(r.cpuMs)} ms`,
      r.db ? `${fmtInt(r.db.busyUs / 1000)} ms` : "",
      r.db ? `${fmtInt(r.db.dbUs / 1000)} ms` : "",
      r.db ? pct(r.db.dbUs / 1000, r.burstMs) : "",
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const pad = (cells: string[]) =>
    cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
  const p99s = withBurst.map((r) => quantile(r.arrivals, 0.99));
  const ratios = withBurst.flatMap((w) => {
    const base = without.find((x) => x.slot.round === w.slot.round);
    return base ? [w.wrk.p99 / base.wrk.p99] : [];
  });
  const ratio = median(ratios);
  const shares = withBurst.flatMap((r) => (r.db ? [r.db.dbUs / 1000 / r.burstMs] : []));
  const busyShares = withBurst.flatMap((r) => (r.db ? [r.db.busyUs / 1000 / r.burstMs] : []));
  const cpuShares = withBurst.flatMap((r) => (r.cpuMs === null ? [] : [r.cpuMs / r.burstMs]));
  const mid = withBurst.find((r) => r.db && r.db.dbUs / 1000 / r.burstMs === median(shares))?.db;
  const lines = [
    "",
    `webhooks benchmark: ${fmtInt(o.endpoints)} endpoints (sale.begins, every store; a third with an affid) on ${o.receivers} loopback receivers, the portal as \`npm run portal\` runs it (SQLite, WEBHOOKS_ALLOW=loopback) reading the API's stream; the API as deployed (src/cli/serve.ts) under wrk -t1 -c${o.connections} -d${o.duration}s on ${product} after a ${o.warmup} s warm-up, the sale's instant ${o.leadIn} s into the measured run; a sale begins in every run; ${o.rounds} rounds of a run with the burst (the endpoints) and one without (no endpoints), order alternating, fresh processes and database each`,
    `pinning: ${pre.cores ? `API on core ${pre.cores.server}, wrk on core ${pre.cores.wrk}, the portal ${args["portal-core"] === "none" ? "unpinned" : `on core ${args["portal-core"] === "server" ? pre.cores.server : pre.cores.wrk}`}, receivers (this process) unpinned` : "none"}; ${cpus().length} x ${cpus()[0]?.model ?? "unknown CPU"}; node ${process.version}`,
    `load at start: ${loadAtStart}`,
    `load at end:   ${loadNote()}`,
    `input: ${catalogNote} and one sale a run, beginning ${o.leadIn} s into its measured wrk run`,
    ...pre.notes.map((n) => `note: ${n}`),
    "",
    pad(header),
    widths.map((w) => "-".repeat(w)).join("  "),
    ...rows.map(pad),
    "",
    "notes:",
    "  delivered: endpoints that got the sale's sale.begins; p50/p99/max: its arrival at the receiver, ms after the sale's instant",
    "  API: wrk's figures for the product detail over the whole measured run (the instant inside it)",
    "  portal CPU: the portal's CPU time (/proc) from the instant until every endpoint had its delivery",
    `  portal busy, DB: the portal's CPU profile from the instant to the last arrival (the burst), its samples not idle, and those in src/db/ or the SQLite driver; DB share: DB over the burst's wall time`,
    ...(mid
      ? [
          `  the median run's database time by caller: ${mid.byCaller
            .slice(0, 5)
            .map(([k, us]) => `${k.split(" ")[0]} ${fmtInt(us / 1000)} ms`)
            .join(", ")}`,
          `  its top self time: ${mid.bySelf
            .slice(0, 6)
            .map(([k, us]) => `${k.replace(/ .*\//, " ")} ${fmtInt(us / 1000)} ms`)
            .join(", ")}`,
        ]
      : []),
    "",
    `API p99 with the burst over without, by round: ${ratios.map((x) => fmtX(x)).join(", ")}; median ${fmtX(ratio)}`,
    `database share of the burst: ${shares.map((x) => `${(x * 100).toFixed(0)}%`).join(", ")} (median ${(median(shares) * 100).toFixed(0)}%); the portal busy ${busyShares.map((x) => `${(x * 100).toFixed(0)}%`).join(", ")} of it (profile), on a core ${cpuShares.map((x) => `${(x * 100).toFixed(0)}%`).join(", ")} of it (its CPU time)`,
    "",
  ];
  const complete = withBurst.every(
    (r) => r.reached === o.endpoints && r.arrivals.length === o.endpoints && r.repeats === 0 && r.ids.size === 1,
  );
  const unverified = results.flatMap((r) => r.unverified);
  const verified = results.reduce((n, r) => n + r.verified, 0);
  const verdicts: Verdict[] = [
    verdict(
      complete,
      `every endpoint got the sale's sale.begins once, one id for all, in every run with the burst (${withBurst.map((r) => `${r.arrivals.length}, ${r.repeats} repeated, ${r.ids.size} ids`).join("; ")})`,
    ),
    verdict(
      unverified.length === 0 && verified > 0,
      `standardwebhooks verified every sampled delivery (${fmtInt(verified)}, every ${SAMPLE_EVERY}th endpoint)${unverified.length ? `: ${unverified.slice(0, 3).join("; ")}` : ""}`,
    ),
    verdict(
      median(p99s) < TARGETS.deliveryP99Ms,
      `deliveries p99 < ${TARGETS.deliveryP99Ms} ms after the instant (median of the rounds): ${fmtMs(median(p99s))} ms (${p99s.map(fmtMs).join(", ")})`,
    ),
    verdict(
      ratio <= TARGETS.apiP99Ratio,
      `the API's p99 with the burst within ${Math.round((TARGETS.apiP99Ratio - 1) * 100)}% of without (median of the rounds' ratios): ${fmtX(ratio)}`,
    ),
    ...note("info", `the database's share of the burst's wall time: ${(median(shares) * 100).toFixed(0)}% (median)`),
  ];
  process.stdout.write([...lines, ...verdicts.map((v) => v.line)].join("\n") + "\n");
  return verdicts.every((v) => v.pass) ? 0 : 2;
}

runBench(main, log);
