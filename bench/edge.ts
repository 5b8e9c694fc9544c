// Edge benchmark (issue 26): a product detail and the all-store sale list polled by 1, 100 and 10,000 distinct keys
// through the shipped fronts with keys checked at the edge (deploy/nginx, deploy/varnish), against nginx serving the
// same bytes from a file (and deploy/haproxy, keys looked up in its map: bench/lib/haproxy-front.ts); the fronts, nginx and the server as deployed share one core, wrk has the other. For each run,
// the requests that reached the server (the resource, and key checks), counted in its request log. With one key, two
// controls beside them: each front's cache with no key check at all, the ceiling a check's cost is measured against.
// Run: npm run bench -- edge [--duration 10] [--warmup 2] [--rounds 1] [--connections 64] [--keys 1,100,10000]
//        [--max-age 5] [--products N] [--keep]
// --max-age: the server's MAX_AGE, short so that a run spans several (the server's requests per max-age are the point).
import { spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { nginxMain, startNginxFront, startVarnishFront, waitForAnswer } from "../scripts/lib/fronts.ts";
import type { Front } from "../scripts/lib/fronts.ts";
import { cpuSeconds } from "../scripts/lib/proc.ts";
import { requireProgram } from "../scripts/lib/test-programs.ts";
import { DEFAULT_EDGE_KEY_TTL } from "../src/config/defaults.ts";
import { generateKey, hashKey, updateKeysFile } from "../src/keys/keys-file.ts";
import { expect, runBench, expectOk, expectSameBytes, httpGet } from "./lib/check.ts";
import { errorsVerdict, fmtInt, note, renderTable, verdict } from "./lib/report.ts";
import type { Table, Verdict } from "./lib/report.ts";
import { measureInterleaved, pairedRatio } from "./lib/rounds.ts";
import type { Run, Stream } from "./lib/rounds.ts";
import { loadNote, preflight, startDeployedOn } from "./lib/servers.ts";
import { prepareSnapshot } from "./lib/snapshot.ts";
import { runWrk } from "./lib/wrk.ts";
import { haproxyMemory, startHaproxyEdge } from "./lib/haproxy-front.ts";
import type { WrkOptions } from "./lib/wrk.ts";

const repoRoot = join(import.meta.dirname, "..");
const log = (msg: string) => process.stderr.write(`bench: ${msg}\n`);
const { values: args } = parseArgs({
  options: {
    duration: { type: "string", default: "10" },
    warmup: { type: "string", default: "2" },
    rounds: { type: "string", default: "1" },
    connections: { type: "string", default: "64" },
    keys: { type: "string", default: "1,100,10000" },
    "max-age": { type: "string", default: "5" },
    products: { type: "string" },
    keep: { type: "boolean", default: false },
  },
});
const o = {
  duration: Number(args.duration),
  warmup: Number(args.warmup),
  rounds: Math.max(1, Number(args.rounds)),
  connections: Number(args.connections),
  keyCounts: args.keys.split(",").map(Number),
  maxAge: Number(args["max-age"]),
};
/** Hits through a front against nginx serving the same bytes from a file, on the same core. */
const TARGET = 0.9;
const FRONTS = ["nginx edge", "varnish edge"] as const;
/** HAProxy asks the server nothing (its map is told of keys) and its 2.6 cache lets misses through at once. */
const HAPROXY = "haproxy edge";
/** HAProxy's hits with 10,000 keys against its own with 1. */
const HAPROXY_KEYS_TARGET = 0.8;
/**
 * Controls, polled with one key: each front's cache with no key check at all, the most a check could leave it. nginx:
 * the shipped configuration without its `auth_request` (the maps, log format and cache as shipped); Varnish: a VCL that
 * only leaves `apikey` out of the hash (the shipped VCL's check is restarts, so it cannot be taken out alone).
 */
const CONTROLS = { "nginx edge": "nginx, no check", "varnish edge": "varnish, no check" } as const;
const CHECK_LINE = "        auth_request /edge/key;\n";
const CONTROL_VCL =
  [
    "vcl 4.1;",
    'backend api { .host = "127.0.0.1"; .port = "8080"; }', // the port is set as for the shipped VCL
    'sub vcl_hash { hash_data(regsuball(req.url, "([?&])apikey=[^&]*", "\\1")); return (lookup); }',
    'sub vcl_deliver { if (obj.hits > 0) { set resp.http.X-Cache = "HIT"; } else { set resp.http.X-Cache = "MISS"; } }',
  ].join("\n") + "\n";

/** A wrk script polling `path` with `keys` in turn (one thread, one Lua state: the keys go round in order). */
const pollScript = (path: string, keys: readonly string[]) =>
  [
    `local keys = {${keys.map((k) => `"${k}"`).join(",")}}`,
    "local n, i = #keys, 0",
    "request = function()",
    "  i = i % n + 1",
    `  return wrk.format("GET", "${path}?apikey=" .. keys[i])`,
    "end",
  ].join("\n");

/** The pid doing a front's work: nginx's own (one process, no master), varnishd's cache process (its only child). */
function workerPid(front: Front, varnish: boolean): number {
  const pid = front.child.pid!;
  if (!varnish) return pid;
  const child = Number(readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/)[0]);
  if (!child) throw new Error("varnishd has no cache process");
  return child;
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

/**
 * nginx serving `files` (URL path -> file) as a static site, tuned as the edge configuration is: the `combined` access
 * log written in batches, and its files kept open.
 */
async function startNginxFiles(dir: string, files: Record<string, string>, cpus: string | undefined): Promise<Front> {
  const port = await freePort();
  await mkdir(join(dir, "logs"), { recursive: true });
  const locations = Object.entries(files).map(([path, file]) => `  location = ${path} { alias ${file}; }`);
  const site = [
    `server {`,
    `  listen 127.0.0.1:${port};`,
    `  default_type "application/json; charset=utf-8";`,
    `  access_log ${join(dir, "logs", "access.log")} combined buffer=64k flush=1s;`,
    `  open_file_cache max=1000 inactive=30s;`,
    ...locations,
    `}`,
  ];
  await writeFile(join(dir, "site.conf"), site.join("\n") + "\n");
  await writeFile(join(dir, "nginx.conf"), nginxMain(dir, join(dir, "site.conf"), join(dir, "logs", "error.log")));
  const argv = [requireProgram("nginx"), "-p", dir, "-c", join(dir, "nginx.conf")];
  const child = cpus ? spawn("taskset", ["-c", cpus, ...argv]) : spawn(argv[0]!, argv.slice(1));
  let output = "";
  child.stderr.on("data", (c: Buffer) => (output += c.toString()));
  const url = `http://127.0.0.1:${port}`;
  await waitForAnswer(`${url}${Object.keys(files)[0]}`, child, () => output);
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGKILL");
    await once(child, "exit");
  };
  return { url, child, stop };
}

/** Requests for `path` and key checks in the server's request log (one JSON line a request). */
async function originCounts(logFile: string, path: string) {
  const text = await readFile(logFile, "utf8");
  const count = (p: string) => text.split(`"path":"${p}"`).length - 1;
  return { resource: count(path), checks: count("/edge/key") };
}

async function main(): Promise<number> {
  const pre = preflight(repoRoot);
  const loadAtStart = loadNote();
  const core = pre.cores ? String(pre.cores.server) : undefined;
  const workDir = await mkdtemp(join(tmpdir(), "fsa-bench-edge-"));
  const stops: (() => Promise<void>)[] = [];
  try {
    log("writing the catalog and building the snapshot ...");
    const snap = await prepareSnapshot(workDir, {
      baseUrl: "https://api.example.test",
      stableFor: 60 + o.keyCounts.length * 2 * 4 * (o.warmup + o.duration + 3) * o.rounds,
      log,
      ...(args.products ? { products: Number(args.products) } : {}),
    });
    // The polling keys, in one write of the keys file; rate 1e9, so no front or server limits them.
    const keys = Array.from({ length: Math.max(...o.keyCounts) }, () => generateKey());
    await updateKeysFile(snap.keysFile, new Date(), (file) => {
      const created = new Date().toISOString();
      keys.forEach((k, i) =>
        file.keys.push({ name: `partner-${i}`, hash: hashKey(k), created, rate: 1e9, burst: 1e9 }),
      );
    });
    const server = await startDeployedOn(snap, {
      core: pre.cores?.server ?? null,
      cwd: repoRoot,
      workDir,
      name: "server",
      host: "127.0.0.1",
      env: { TRUST_PROXY: "loopback", MAX_AGE: String(o.maxAge), LOG_REQUESTS: "1" },
    });
    stops.push(() => server.stop());
    const origin = `http://127.0.0.1:${server.port}`;

    // The bytes every case serves: the server's identity body of each resource, also as a file for nginx.
    const resources = { product: snap.product.path, list: snap.list.path } as const;
    const bodies = new Map<string, Buffer>();
    const files: Record<string, string> = {};
    await mkdir(join(workDir, "files"));
    for (const [name, path] of Object.entries(resources)) {
      const res = await httpGet(`${origin}${path}?apikey=${snap.key}`);
      expectOk(res, `server ${path}`, "identity");
      bodies.set(path, res.body);
      files[path] = join(workDir, "files", `${name}.json`);
      await writeFile(files[path], res.body);
    }
    const fronts: Record<string, { front: Front; pid: number }> = {};
    const file = await startNginxFiles(join(workDir, "nginx-file"), files, core);
    stops.push(() => file.stop());
    fronts["nginx file"] = { front: file, pid: file.child.pid! };
    const edge = { upstreamPort: server.port, ...(core ? { cpus: core } : {}) };
    const nginx = await startNginxFront({
      program: requireProgram("nginx"),
      dir: join(workDir, "nginx-edge"),
      port: await freePort(),
      ...edge,
    });
    stops.push(() => nginx.stop());
    fronts["nginx edge"] = { front: nginx, pid: workerPid(nginx, false) };
    const varnishDir = await mkdtemp(join(tmpdir(), "fsa-bench-varnish-"));
    stops.push(() => rm(varnishDir, { recursive: true, force: true }));
    const varnish = await startVarnishFront({
      program: requireProgram("varnishd"),
      pkill: requireProgram("pkill"),
      dir: varnishDir, // varnishd reads it as its own user: not under workDir (0700)
      port: await freePort(),
      storage: "malloc,256m",
      ...edge,
    });
    stops.push(() => varnish.stop());
    fronts["varnish edge"] = { front: varnish, pid: workerPid(varnish, true) };
    const haproxy = await startHaproxyEdge({
      dir: join(workDir, "haproxy"),
      port: await freePort(),
      keysFile: snap.keysFile,
      ...edge,
    });
    stops.push(() => haproxy.stop());
    fronts[HAPROXY] = { front: haproxy, pid: haproxy.child.pid! };
    const nginxBare = await startNginxFront({
      program: requireProgram("nginx"),
      dir: join(workDir, "nginx-no-check"),
      port: await freePort(),
      site: (site) => {
        expect(site.includes(CHECK_LINE), "deploy/nginx has no `auth_request /edge/key;` line to take out");
        return site.replace(CHECK_LINE, "");
      },
      ...edge,
    });
    stops.push(() => nginxBare.stop());
    fronts[CONTROLS["nginx edge"]] = { front: nginxBare, pid: workerPid(nginxBare, false) };
    const bareDir = await mkdtemp(join(tmpdir(), "fsa-bench-varnish-"));
    stops.push(() => rm(bareDir, { recursive: true, force: true }));
    await writeFile(join(workDir, "no-check.vcl"), CONTROL_VCL);
    const varnishBare = await startVarnishFront({
      program: requireProgram("varnishd"),
      pkill: requireProgram("pkill"),
      dir: bareDir,
      vcl: join(workDir, "no-check.vcl"),
      port: await freePort(),
      storage: "malloc,256m",
      ...edge,
    });
    stops.push(() => varnishBare.stop());
    fronts[CONTROLS["varnish edge"]] = { front: varnishBare, pid: workerPid(varnishBare, true) };

    // Checked before anything is measured: every front sends the server's bytes; the edges' second answer is a hit.
    for (const path of Object.values(resources)) {
      for (const [name, { front }] of Object.entries(fronts)) {
        for (const round of [1, 2]) {
          const res = await httpGet(`${front.url}${path}?apikey=${keys[0]}`);
          expectOk(res, `${name} ${path}`, "identity");
          expectSameBytes(res.body, bodies.get(path)!, `${name} ${path}`);
          if (round === 2 && name !== "nginx file")
            expect(res.header("x-cache") === "HIT", `${name} ${path}: X-Cache ${res.header("x-cache")}, not HIT`);
        }
      }
    }

    // The server's requests during each measured run of an edge front (its log is written at least once a second),
    // and its CPU time per request of the run: with the front's, what a request through the front costs the core.
    const reached = new Map<string, { resource: number; checks: number; serverUs: number }>();
    const counting = async (url: string, w: WrkOptions) => {
      if (w.duration !== o.duration || url.startsWith(origin) || url.startsWith(file.url)) return runWrk(url, w);
      const path = new URL(url).pathname;
      await new Promise((r) => setTimeout(r, 1_200));
      const before = { ...(await originCounts(server.logFile, path)), cpu: cpuSeconds(server.pid) ?? NaN };
      const r = await runWrk(url, w);
      const cpu = cpuSeconds(server.pid) ?? NaN;
      await new Promise((r) => setTimeout(r, 1_200));
      const after = await originCounts(server.logFile, path);
      reached.set(`${url} ${w.script}`, {
        resource: after.resource - before.resource,
        checks: after.checks - before.checks,
        serverUs: ((cpu - before.cpu) * 1e6) / r.requests,
      });
      return r;
    };
    const measured = {
      core: pre.cores?.wrk ?? null,
      connections: o.connections,
      duration: o.duration,
      warmup: o.warmup,
      rounds: o.rounds,
      log,
      wrk: counting,
    };
    const groups: Table["groups"][number][] = [];
    const results: {
      path: string;
      n: number;
      front: string;
      run: Run;
      ratio: number | null;
      perCore: number | null;
      origin?: { resource: number; checks: number; serverUs: number };
    }[] = [];
    let offset = 0;
    for (const path of Object.values(resources)) {
      for (const n of o.keyCounts) {
        const script = join(workDir, `poll-${path.replace(/\W+/g, "-")}-${n}.lua`);
        await writeFile(script, pollScript(path, keys.slice(0, n)));
        // The controls check no key: the number of keys changes nothing for them, so they run with the fewest.
        const controls: readonly string[] = n === Math.min(...o.keyCounts) ? [] : Object.values(CONTROLS);
        const polled = Object.entries(fronts).filter(([name]) => !controls.includes(name));
        const streams: Stream[] = polled.map(([name, { front, pid }]) => ({
          name,
          url: `${front.url}${path}`,
          pid,
          headers: {},
          script: () => Promise.resolve(script),
        }));
        const label = `${path === resources.product ? "product" : "list"}, ${fmtInt(n)} key${n === 1 ? "" : "s"}`;
        const runs = await measureInterleaved(streams, { ...measured, offset: offset++, label });
        const base = runs.get("nginx file");
        const rows = streams.map((s) => {
          const run = runs.get(s.name)!;
          const ratio = s.name === "nginx file" ? null : pairedRatio(run, base, (x) => x.r.requestsPerSec);
          const got = reached.get(`${s.url} ${script}`);
          // Requests per CPU-second of the core: the file's nginx, against the front's and the server's together.
          const perCore = got && run.cpu && base?.cpu ? base.cpu / (run.cpu + got.serverUs) : null;
          results.push({ path, n, front: s.name, run, ratio, perCore, ...(got ? { origin: got } : {}) });
          return {
            name: s.name,
            run,
            extra: got ? [`${fmtInt(got.resource)} / ${fmtInt(got.checks)}`, got.serverUs.toFixed(1)] : ["", ""],
            ratios: [ratio, perCore] as const,
          };
        });
        groups.push({ label, bytes: bodies.get(path)!.length, rows });
      }
    }
    // The server alone, polled with one key, for reference.
    const aloneScript = join(workDir, "poll-alone.lua");
    const alone = [];
    for (const path of Object.values(resources)) {
      await writeFile(aloneScript, pollScript(path, keys.slice(0, 1)));
      const s: Stream = {
        name: "server alone",
        url: `${origin}${path}`,
        pid: server.pid,
        headers: {},
        script: () => Promise.resolve(aloneScript),
      };
      const run = (await measureInterleaved([s], { ...measured, offset: 0, label: `${path}, server alone` })).get(
        s.name,
      )!;
      alone.push({
        label: `${path === resources.product ? "product" : "list"}, 1 key`,
        rows: [{ name: "server alone", run, extra: ["", ""] }],
      });
    }

    const table: Table = {
      columns: ["case", "front", "server: resource / checks", "server us/req", "req/s vs file", "per core vs file"],
      groups: [...groups, ...alone],
      notes: [
        `req/s: wrk -t1 -c${o.connections} for ${o.duration} s after a ${o.warmup} s warm-up, each request with the next of the case's keys (a Lua script; the file's runs too)`,
        "CPU us/req and core: the front's own process (nginx's; varnishd's cache process); the fronts, the file's nginx and the server share the core, and other processes on the machine may too",
        `server: resource / checks: the requests for the resource and GET /edge/key the server logged during the measured run (MAX_AGE=${o.maxAge}, EDGE_KEY_TTL=${DEFAULT_EDGE_KEY_TTL}); server us/req: its CPU time over the run's requests`,
        "req/s vs file: the front's req/s over the file's in the same round; per core vs file: requests per CPU-second, the file's nginx against the front and the server together (other load on the core cancels out of it)",
      ],
    };
    const verdicts: Verdict[] = [errorsVerdict(table, "in any run")];
    const controlNames: readonly string[] = Object.values(CONTROLS);
    for (const r of results.filter((x) => x.front !== "nginx file" && !controlNames.includes(x.front))) {
      const what = `${r.front}, ${r.path}, ${fmtInt(r.n)} keys: ${r.perCore?.toFixed(2) ?? "?"}x nginx from a file per core, ${r.ratio?.toFixed(2) ?? "?"}x its req/s`;
      // With 10,000 keys the server answers a check a key every 2-3 s on the same core: not hits only.
      if (r.n <= 100)
        verdicts.push(verdict((r.perCore ?? 0) >= TARGET, `cache hits at >= ${TARGET}x per core (${what})`));
      else verdicts.push(...note("info", what));
    }
    // What the target asks against what each front's cache gives with no check at all, in the same rounds.
    for (const front of FRONTS) {
      for (const path of Object.values(resources)) {
        const n = Math.min(...o.keyCounts);
        const pick = (name: string) => results.find((r) => r.front === name && r.path === path && r.n === n);
        const edge = pick(front);
        const bare = pick(CONTROLS[front]);
        if (!edge?.perCore || !bare?.perCore) continue;
        verdicts.push(
          ...note(
            "info",
            `${CONTROLS[front]}, ${path}: ${bare.perCore.toFixed(2)}x nginx from a file per core (the most a check can leave); ${front} with its check: ${edge.perCore.toFixed(2)}x, ${(edge.perCore / bare.perCore).toFixed(2)} of that`,
          ),
        );
      }
    }
    for (const front of FRONTS) {
      for (const path of Object.values(resources)) {
        const counts = results
          .filter((r) => r.front === front && r.path === path && r.origin)
          .map((r) => ({ n: r.n, ...r.origin! }));
        const perMaxAge = (x: number) => (x * o.maxAge) / o.duration;
        const line = counts
          .map(
            (c) =>
              `${fmtInt(c.n)} keys: ${perMaxAge(c.resource).toFixed(1)} resource, ${fmtInt(perMaxAge(c.checks))} checks`,
          )
          .join("; ");
        const resourceSpread = Math.max(...counts.map((c) => c.resource)) - Math.min(...counts.map((c) => c.resource));
        verdicts.push(
          verdict(
            resourceSpread <= 1,
            `${front} ${path}: the server's requests per max-age (${o.maxAge} s) for the resource do not grow with the keys (${line})`,
          ),
        );
        const period = DEFAULT_EDGE_KEY_TTL + 1;
        const within = counts.every((c) => c.checks <= c.n * Math.ceil(o.duration / DEFAULT_EDGE_KEY_TTL + 1));
        verdicts.push(
          verdict(within, `${front} ${path}: at most one check per key per ${DEFAULT_EDGE_KEY_TTL}-${period} s`),
        );
      }
    }
    verdicts.push(
      ...(await haproxyVerdicts(results, {
        dir: join(workDir, "haproxy-memory"),
        upstreamPort: server.port,
        core,
        wrkCore: pre.cores?.wrk ?? null,
        path: resources.product,
      })),
    );
    const lines = [
      "",
      `edge benchmark: ${o.rounds} round(s); keys checked at the edge (deploy/nginx, deploy/varnish) against nginx serving the same bytes from a file`,
      `pinning: ${pre.cores ? `fronts, nginx and the server on core ${pre.cores.server}, wrk on core ${pre.cores.wrk} (taskset)` : "none"}; ${cpus().length} x ${cpus()[0]?.model ?? "unknown CPU"}; node ${process.version}`,
      `load at start: ${loadAtStart}`,
      `load at end:   ${loadNote()}`,
      `input: ${snap.catalogNote}; product ${resources.product}, list ${resources.list} (${snap.list.sales} sales); identity bodies`,
      ...pre.notes.map((n) => `note: ${n}`),
      "",
      renderTable(table),
      "",
      ...verdicts.map((v) => v.line),
    ];
    process.stdout.write(lines.join("\n") + "\n");
    return verdicts.every((v) => v.pass) ? 0 : 2;
  } finally {
    for (const stop of stops.reverse()) await stop();
    if (args.keep) log(`kept ${workDir}`);
    else await rm(workDir, { recursive: true, force: true });
  }
}

/** HAProxy's hits with many keys against its own with one, its server requests, and its memory at 100,000 keys. */
async function haproxyVerdicts(
  results: { path: string; n: number; front: string; run: Run; origin?: { resource: number; checks: number } }[],
  at: { dir: string; upstreamPort: number; core: string | undefined; wrkCore: number | null; path: string },
): Promise<Verdict[]> {
  const out: Verdict[] = [];
  for (const r of results.filter((x) => x.front === HAPROXY)) {
    const one = results.find((x) => x.front === HAPROXY && x.path === r.path && x.n === Math.min(...o.keyCounts));
    const ratio = r.run.r.requestsPerSec / (one?.run.r.requestsPerSec ?? NaN);
    if (r.n >= 10_000)
      out.push(
        verdict(
          ratio >= HAPROXY_KEYS_TARGET,
          `${HAPROXY} ${r.path}, ${fmtInt(r.n)} keys: ${ratio.toFixed(2)}x its req/s with 1 key (>= ${HAPROXY_KEYS_TARGET}x)`,
        ),
      );
    if (r.origin)
      out.push(
        ...note(
          "info",
          `${HAPROXY} ${r.path}, ${fmtInt(r.n)} keys: the server saw ${fmtInt(r.origin.resource)} requests for the resource, ${fmtInt(r.origin.checks)} checks`,
        ),
      );
  }
  const m = await haproxyMemory({
    dir: at.dir,
    port: await freePort(),
    upstreamPort: at.upstreamPort,
    path: at.path,
    n: 100_000,
    wrkCore: at.wrkCore,
    ...(at.core ? { cpus: at.core } : {}),
  });
  out.push(
    ...note(
      "info",
      `${HAPROXY} memory: ${m.oneKeyMb.toFixed(1)} MB with 1 key, ${m.mapMb.toFixed(1)} MB with 100,000 in its map (resync ${fmtInt(m.resyncMs)} ms), ${m.bucketsMb.toFixed(1)} MB once each made a request (${fmtInt(m.requests)} requests)`,
    ),
  );
  return out;
}

runBench(main, log);
