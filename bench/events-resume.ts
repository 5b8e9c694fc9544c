// Events resume benchmark (a reconnect storm): --streams GET /v1/events streams open at once on one server as deployed,
// each with a Last-Event-ID, as after a restart or a network blip. The snapshot has --sales sales that began over the
// last day, so that a stream a day behind is sent a large replay. Two phases: (a) every stream a few events behind,
// (b) every stream a day behind. Measured for each: from the first connect to each stream having its last missed
// event (p50, p99, max), the bytes each got, the server's CPU and RSS (before, peak sampled every 50 ms, after), and
// whether each stream got exactly the events a reference stream got (the same count and IDs, in stream order), which
// in turn are the schedule's. Beside the storms, --pollers clients ask for the active list once a second each.
// Run: npm run bench -- events-resume [--streams 10000] [--sales 600] [--pollers 200] [--opening N] [--timeout 180]
//        [--products N] [--seed N] [--keep]
import { readFile, mkdtemp, rm, appendFile } from "node:fs/promises";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { cpuSeconds, rssMb } from "../scripts/lib/proc.ts";
import { startClientsProcess, streamKeys, STREAMS_PER_KEY as PER_KEY } from "./lib/clients-process.ts";
import type { ReadyChild } from "../scripts/lib/spawn-ready.ts";
import { createKey } from "../src/keys/keys-file.ts";
import { createSchedule, firstAfter } from "../src/serve/events/schedule.ts";
import type { SaleEvent } from "../src/serve/events/schedule.ts";
import { SERVER_NODE_FLAGS } from "../src/serve/http/server.ts";
import { loadSnapshot } from "../src/snapshot/load.ts";
import type { PollersResult, ResumeClientsConfig, StreamsResult } from "./events-resume/clients.ts";
import { CheckError, runBench } from "./lib/check.ts";
import { fmtBytes, fmtInt, fmtMs, fmtX, note, verdict } from "./lib/report.ts";
import type { Verdict } from "./lib/report.ts";
import { loadNote, preflight, startDeployedOn } from "./lib/servers.ts";
import { prepareSnapshot } from "./lib/snapshot.ts";

const HOST = "127.0.0.1";
const repoRoot = join(import.meta.dirname, "..");
const LIST = "/v1/sales/active.json";
/** Events a stream of phase (a) missed. */
const HANDFUL = 5;
/** The last sales begin this often in the minutes before the build, so that phase (a) resumes from minutes ago. */
const RECENT = { sales: 10, everySec: 30 };
/** How far inside the 24 hours phase (b)'s Last-Event-ID is: a run must reach phase (b) before it leaves the window. */
const DAY_MARGIN_SEC = 600;
const DAY_SEC = 86_400;
const RSS_SAMPLE_MS = 50;
/**
 * Targets. (a): every stream caught up within 2 s of the storm's first connect; admitting 10,000 streams alone takes
 * the one server core 1.1-1.3 s here (0.11-0.13 ms a stream: the connection, the request, the head), so 1 s, the
 * first target, was below what one process can do. (b): memory per resuming stream bounded (one 32-event chunk held
 * at most); how long a day's replay takes is the bytes' (0.9 MB a stream, 9 GB in all), so it has no target.
 * Polling beside a storm: a WARN past 50 ms.
 */
const TARGETS = { fewP99Ms: 2000, kbPerStream: 64, pollP99Ms: 50 } as const;
const log = (msg: string) => process.stderr.write(`bench: ${msg}\n`);

const { values: args } = parseArgs({
  options: {
    streams: { type: "string", default: "10000" },
    sales: { type: "string", default: "600" },
    pollers: { type: "string", default: "200" },
    // Connections being opened at once: by default every stream at once, as clients reconnecting after a restart.
    opening: { type: "string" },
    timeout: { type: "string", default: "180" },
    products: { type: "string" },
    seed: { type: "string", default: "1" },
    keep: { type: "boolean", default: false },
  },
});
const o = {
  streams: Number(args.streams),
  sales: Math.max(RECENT.sales * 2, Number(args.sales)),
  pollers: Number(args.pollers),
  opening: Number(args.opening ?? args.streams),
  timeoutMs: Number(args.timeout) * 1000,
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
  max: Math.max(...xs),
});

const iso = (sec: number) => new Date(sec * 1000).toISOString().replace(".000Z", "Z");
/** About 700 bytes of copy: a sale's description as a retailer writes one. */
const DESCRIPTION = Array.from(
  { length: 6 },
  () => "Our curated edit of the season's favourites, in limited numbers and at the lowest prices of the year.",
).join(" ");

/**
 * `count` sales, one begun every few minutes over the last day (until 10 minutes before `now`), then RECENT's in the
 * minutes before it, each ending two days after it began (none begins or ends during the run).
 */
function resumeSales(count: number, now: number): string {
  const spread = count - RECENT.sales;
  const first = now - DAY_SEC + DAY_MARGIN_SEC;
  const step = (DAY_SEC - DAY_MARGIN_SEC - 600) / spread;
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    const begins =
      i < spread ? first + Math.round(i * step) : now - (RECENT.sales - (i - spread)) * RECENT.everySec - 30;
    const sale = {
      key: `resume-${i}`,
      store: "home",
      name: `Resume benchmark sale ${i}`,
      description: DESCRIPTION,
      begins: iso(begins),
      ends: iso(begins + 2 * DAY_SEC),
      images: [{ url: `https://cdn.example-retailer.com/resume-${i}.jpg`, width: 600, height: 300 }],
      product_ids: [],
    };
    lines.push(JSON.stringify(sale));
  }
  return lines.join("\n") + "\n";
}

/** Sockets of the server's port in /proc/net/tcp that are open or closing on its side (ESTABLISHED, CLOSE_WAIT). */
async function serverSockets(port: number): Promise<number> {
  const hex = `:${port.toString(16).toUpperCase().padStart(4, "0")} `;
  let n = 0;
  for (const line of (await readFile("/proc/net/tcp", "utf8")).split("\n")) {
    const [, local, , state] = line.trim().split(/\s+/);
    if (local && `${local} `.endsWith(hex) && (state === "01" || state === "08")) n++;
  }
  return n;
}

/** Waits until the server holds at most `n` connections (the last phase's streams are closed on its side). */
async function untilSockets(port: number, n: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  while ((await serverSockets(port)) > n) {
    if (Date.now() > deadline) throw new CheckError(`the server still holds more than ${n} connections after 60 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The kernel's count of connections dropped because a listen queue was full (TcpExt ListenDrops). */
async function listenDrops(): Promise<number> {
  const lines = (await readFile("/proc/net/netstat", "utf8")).split("\n").filter((l) => l.startsWith("TcpExt:"));
  const [names, values] = lines.map((l) => l.split(/\s+/));
  const i = names?.indexOf("ListenDrops") ?? -1;
  return i > 0 && values ? Number(values[i]) : NaN;
}

/** Starts a clients process (pinned to `core`); `result` gives its RESULT line, parsed, once it prints it. */
const startClients = <R>(name: string, c: ResumeClientsConfig, workDir: string, core: number | null) =>
  startClientsProcess<R>(name, c, {
    repoRoot,
    script: "bench/events-resume/clients.ts",
    workDir,
    core,
    readyTimeoutMs: 60_000,
  });

/** A line on the streams the server closed before they had their last missed event, if any: when, after how much. */
function endedEarly(r: StreamsResult): string[] {
  const at = r.endedMs.flatMap((ms, i) => (ms === null ? [] : [[ms, r.bytes[i]!] as const]));
  if (at.length === 0) return ["streams closed by the server before their last missed event: none"];
  const ms = stats(at.map(([t]) => t));
  const bytes = stats(at.map(([, b]) => b));
  return [
    `streams closed by the server before their last missed event: ${fmtInt(at.length)}, at ${fmtMs(ms.p50)} ms from the first connect (p50; first ${fmtMs(Math.min(...at.map(([t]) => t)))}, last ${fmtMs(ms.max)}), having read ${fmtBytes(Math.round(bytes.p50))} (p50; max ${fmtBytes(bytes.max)})`,
  ];
}

/** A phase's measured figures. */
interface Phase {
  name: string;
  lastId: string;
  /** How long before the phase the Last-Event-ID's event was, s. */
  behindSec: number;
  expected: readonly SaleEvent[];
  referenceOk: boolean;
  storm: StreamsResult;
  done: ReturnType<typeof stats>;
  bytes: ReturnType<typeof stats>;
  exact: number;
  cpuMs: number;
  rss: { before: number; peak: number; after: number; closed: number };
  drops: number;
  /** Epoch ms of the storm: from the first connect to the last stream done (or the result). */
  window: [number, number];
}

async function main(): Promise<number> {
  const pre = preflight(repoRoot);
  const loadAtStart = loadNote();
  const workDir = await mkdtemp(join(tmpdir(), "fsa-bench-events-resume-"));
  const children: ReadyChild[] = [];
  try {
    log(`writing the catalog (${o.sales} sales over the last day added) and building the snapshot ...`);
    const snap = await prepareSnapshot(workDir, {
      baseUrl: "https://api.example.test",
      seed: Number(args.seed),
      log,
      ...(args.products ? { products: Number(args.products) } : {}),
      edit: (dir) => appendFile(join(dir, "sales.ndjson"), resumeSales(o.sales, Math.floor(Date.now() / 1000))),
    });
    // The events the server replays, read by the server's own code from the snapshot (the reference stream must get
    // them, and every stream what the reference got).
    const { events } = createSchedule(await loadSnapshot(snap.dataDir));
    const keys = await streamKeys(snap.keysFile, o.streams, "resume");
    const refKey = await createKey(snap.keysFile, "resume-reference", new Date(), { rate: 1e9, burst: 1e9 });
    const server = await startDeployedOn(snap, {
      core: pre.cores?.server ?? null,
      cwd: repoRoot,
      workDir,
      name: "events-resume",
      host: HOST,
      nodeArgs: SERVER_NODE_FLAGS,
      env: { LOG_REQUESTS: "1" },
    });
    children.push(server);
    const clientCore = pre.cores?.wrk ?? null;
    const base = { host: HOST, port: server.port };
    const rssLoaded = rssMb(server.pid);

    log(`starting ${o.pollers} polling clients ...`);
    const pollers = await startClients<PollersResult>(
      "pollers",
      { ...base, mode: "pollers", key: snap.key, path: LIST, count: o.pollers },
      workDir,
      clientCore,
    );
    children.push(pollers.child);
    const pollingFrom = Date.now();
    await new Promise((r) => setTimeout(r, 5000)); // the polling alone, to compare the storms' with

    const runPhase = async (name: string, pick: (end: number, now: number) => number): Promise<Phase> => {
      const now = Math.floor(Date.now() / 1000);
      const end = firstAfter(events, now);
      const from = pick(end, now);
      const last = events[from];
      if (!last || from >= end - 1) throw new CheckError(`${name}: no events to miss (${from} of ${end})`);
      const expected = events.slice(from + 1, end);
      const target = events[end - 1]!.id;
      const storm = (count: number, key: string[], reference: StreamsResult | null): ResumeClientsConfig => ({
        ...base,
        mode: "streams",
        keys: key,
        perKey: PER_KEY,
        count,
        lastId: last.id,
        targetId: target,
        opening: o.opening,
        timeoutMs: o.timeoutMs,
        reference: reference && { count: reference.count[0]!, hash: reference.hash[0]! },
      });

      log(`${name}: a reference stream resumes from ${last.id} (${expected.length} events missed) ...`);
      const ref = await startClients<StreamsResult>(`${name}-reference`, storm(1, [refKey], null), workDir, clientCore);
      children.push(ref.child);
      const reference = await ref.result;
      await ref.child.stop();
      const referenceOk =
        reference.doneMs[0] !== null &&
        reference.ids?.length === expected.length &&
        reference.ids.every((id, i) => id === expected[i]!.id);
      await untilSockets(server.port, o.pollers);

      log(`${name}: ${o.streams} streams resume at once ...`);
      const rssBefore = rssMb(server.pid);
      let peak = rssBefore;
      const sampler = setInterval(() => (peak = Math.max(peak, rssMb(server.pid))), RSS_SAMPLE_MS);
      const cpuBefore = cpuSeconds(server.pid) ?? NaN;
      const dropsBefore = await listenDrops();
      const s = await startClients<StreamsResult>(name, storm(o.streams, keys, reference), workDir, clientCore);
      children.push(s.child);
      const result = await s.result;
      const cpuMs = ((cpuSeconds(server.pid) ?? NaN) - cpuBefore) * 1000;
      clearInterval(sampler);
      const rssAfter = rssMb(server.pid);
      peak = Math.max(peak, rssAfter);
      const drops = (await listenDrops()) - dropsBefore;
      await s.child.stop();
      children.splice(children.indexOf(s.child), 1);
      await untilSockets(server.port, o.pollers);
      const done = result.doneMs.filter((ms): ms is number => ms !== null);
      const exact = result.doneMs.filter(
        (ms, i) => ms !== null && result.count[i] === reference.count[0] && result.hash[i] === reference.hash[0],
      ).length;
      return {
        name,
        lastId: last.id,
        behindSec: now - last.pos,
        expected,
        referenceOk,
        storm: result,
        done: stats(done),
        bytes: stats(result.bytes),
        exact,
        cpuMs,
        rss: { before: rssBefore, peak, after: rssAfter, closed: rssMb(server.pid) },
        drops,
        window: [result.startedMs, result.startedMs + Math.max(...done, 0)],
      };
    };

    const phases = [
      await runPhase("a-few-behind", (end) => end - 1 - HANDFUL),
      // The first event at least half the margin inside the 24 hours: it stays inside while the phase runs.
      await runPhase("a-day-behind", (_, now) => firstAfter(events, now - DAY_SEC + DAY_MARGIN_SEC / 2)),
    ];
    pollers.child.child.kill("SIGUSR2");
    const polled = await pollers.result;
    const sentIn = (from: number, to: number) =>
      stats(polled.answers.filter(([done, ms]) => done - ms >= from && done - ms < to).map((a) => a[1]));
    const alone = sentIn(pollingFrom, phases[0]!.window[0]);
    const during = phases.map((p) => sentIn(p.window[0], p.window[1]));
    const bad = polled.answers.filter((a) => a[2] !== 200 && a[2] !== 304).length;
    // The server's own time for the polls (the request log's `ms`, logged as each ends): what is not in it, of the
    // latency the clients saw, is the wait for the server's event loop (or for the clients' core).
    const logged: [number, number][] = [];
    for (const line of (await readFile(server.logFile, "utf8")).split("\n")) {
      const m = /"time":"([^"]+)","method":"GET","path":"\/v1\/sales\/active\.json".*"ms":([\d.]+)/.exec(line);
      if (m) logged.push([Date.parse(m[1]!), Number(m[2])]);
    }
    const loggedIn = ([from, to]: [number, number]) =>
      stats(logged.filter(([t]) => t >= from && t < to).map(([, ms]) => ms));

    const row = (what: string, s: ReturnType<typeof stats>, fmt = fmtMs) =>
      `${what.padEnd(60)} ${fmtInt(s.n).padStart(7)} ${fmt(s.p50).padStart(9)} ${fmt(s.p99).padStart(9)} ${fmt(s.max).padStart(9)}`;
    const kbPerStream = (p: Phase) => ((p.rss.peak - p.rss.before) * 1024) / o.streams;
    const lines = [
      "",
      `events-resume benchmark: ${fmtInt(o.streams)} GET /v1/events streams (${keys.length} keys x ${PER_KEY}) resume at once with one Last-Event-ID (connections opened ${o.opening >= o.streams ? "all at once" : `${o.opening} at a time`}), twice: (a) ${HANDFUL} events behind, (b) a day behind; ${fmtInt(o.pollers)} clients poll ${LIST} once a second each meanwhile; one server as deployed (src/cli/serve.ts, default configuration, LOG_REQUESTS=1)`,
      `pinning: ${pre.cores ? `server on core ${pre.cores.server}, clients (one streams process, niced, and one polling process) on core ${pre.cores.wrk} (taskset)` : "none"}; ${cpus().length} x ${cpus()[0]?.model ?? "unknown CPU"}; node ${process.version}`,
      `load at start: ${loadAtStart}`,
      `load at end:   ${loadNote()}`,
      `input: ${snap.catalogNote} and ${o.sales} sales begun over the last day (${RECENT.sales} of them every ${RECENT.everySec} s in the minutes before the build); ${events.length} begins/ends events in the snapshot; built in ${(snap.buildMs / 1000).toFixed(1)} s; server RSS loaded ${fmtInt(rssLoaded)} MB`,
      ...pre.notes.map((n) => `note: ${n}`),
    ];
    for (const p of phases)
      lines.push(
        "",
        `phase ${p.name}: Last-Event-ID ${p.lastId} (${fmtInt(p.behindSec)} s before the phase), ${fmtInt(p.expected.length)} events missed`,
        `${"ms from the first connect (bytes: per stream)".padEnd(60)} ${"n".padStart(7)} ${"p50".padStart(9)} ${"p99".padStart(9)} ${"max".padStart(9)}`,
        row("a stream has its last missed event", p.done),
        row("bytes a stream read until then (head included)", p.bytes, (n) => fmtBytes(Math.round(n))),
        `server CPU over the storm ${fmtInt(p.cpuMs)} ms (${fmtMs(p.cpuMs / o.streams)} ms a stream, the polls included); the streams' client process ${fmtInt(p.storm.cpuMs)} ms`,
        `server RSS ${fmtInt(p.rss.before)} MB before, ${fmtInt(p.rss.peak)} MB peak (sampled every ${RSS_SAMPLE_MS} ms), ${fmtInt(p.rss.after)} MB at the storm's end (its streams still open), ${fmtInt(p.rss.closed)} MB once they had closed: +${kbPerStream(p).toFixed(1)} KB a stream at the peak (the open stream's own cost included)`,
        `listen queue drops (TcpExt ListenDrops, the host's) during the storm: ${fmtInt(p.drops)} (each a SYN retried after 1, 3, 7, 15 ... s); streams refused: ${p.storm.refusedCount ? `${fmtInt(p.storm.refusedCount)} (${p.storm.refused.join("; ")} ...)` : "none"}; events after the last missed one (live): ${fmtInt(p.storm.after.reduce((a, b) => a + b, 0))}`,
        ...endedEarly(p.storm),
      );
    lines.push(
      "",
      row("polling latency before the storms (ms)", alone),
      ...phases.flatMap((p, i) => [
        row(`polling latency, polls sent during storm ${p.name}`, during[i]!),
        row(`  the server's own time (request log ms), polls ending then`, loggedIn(p.window)),
      ]),
      `polling p99 during the storms / before them: ${phases.map((p, i) => `${p.name} ${fmtX(during[i]!.p99 / alone.p99)}`).join(", ")}`,
      `phase b / phase a: p99 ${fmtX(phases[1]!.done.p99 / phases[0]!.done.p99)}, server CPU ${fmtX(phases[1]!.cpuMs / phases[0]!.cpuMs)}, bytes a stream ${fmtX(phases[1]!.bytes.p50 / phases[0]!.bytes.p50)}`,
      "",
    );
    const verdicts: Verdict[] = [
      ...phases.map((p) =>
        verdict(
          p.referenceOk && p.exact === o.streams && p.storm.disordered === 0,
          `${p.name}: every stream resumed with exactly its events (the reference stream got the schedule's ${p.expected.length}: ${p.referenceOk ? "yes" : "NO"}; ${fmtInt(p.exact)} of ${fmtInt(o.streams)} streams got the reference's IDs, ${fmtInt(p.done.n)} got their last missed event; ${p.storm.disordered} out of order)`,
        ),
      ),
      verdict(
        phases[0]!.done.p99 < TARGETS.fewP99Ms,
        `${phases[0]!.name}: p99 < ${TARGETS.fewP99Ms} ms from the first connect to a stream's last missed event: ${fmtMs(phases[0]!.done.p99)} ms (max ${fmtMs(phases[0]!.done.max)} ms)`,
      ),
      verdict(
        kbPerStream(phases[1]!) < TARGETS.kbPerStream,
        `${phases[1]!.name}: peak server RSS growth < ${TARGETS.kbPerStream} KB a resuming stream: ${kbPerStream(phases[1]!).toFixed(1)} KB (${fmtInt(phases[1]!.rss.before)} -> ${fmtInt(phases[1]!.rss.peak)} MB)`,
      ),
      ...phases.flatMap((p, i) =>
        note(
          "WARN",
          `polling p99 during storm ${p.name} is ${fmtMs(during[i]!.p99)} ms (target ${TARGETS.pollP99Ms} ms; ${fmtMs(alone.p99)} ms before the storms)`,
          !(during[i]!.p99 < TARGETS.pollP99Ms),
        ),
      ),
      ...note(
        "info",
        `polling p99 within ${TARGETS.pollP99Ms} ms during both storms: ${during.map((d) => fmtMs(d.p99)).join(" and ")} ms`,
        during.every((d) => d.p99 < TARGETS.pollP99Ms),
      ),
      verdict(
        bad === 0 && polled.errors.length === 0,
        `polling answered 200/304 throughout: ${bad} other answers, errors: ${polled.errors.join("; ") || "none"}; skipped (the previous poll still out): ${polled.skipped}`,
      ),
    ];
    process.stdout.write([...lines, ...verdicts.map((v) => v.line)].join("\n") + "\n");
    return verdicts.every((v) => v.pass) ? 0 : 2;
  } finally {
    for (const c of children.reverse()) await c.stop().catch(() => undefined);
    if (args.keep) log(`kept ${workDir}`);
    else await rm(workDir, { recursive: true, force: true });
  }
}

runBench(main, log);
