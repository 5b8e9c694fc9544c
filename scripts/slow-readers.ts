// Readers that never read, against the real server in a child process: N connections from one address each ask for
// /docs (the largest response) and never read it. Prints the kernel's TCP memory (/proc/net/sockstat, and `ss -tm`
// for this server's port only), the server's RSS, what the connections were answered, and whether a well-behaved
// client still gets its 200s meanwhile.
//
//   tsx scripts/slow-readers.ts [--connections 300] [--hold-seconds 20] [--products 200] [--path /docs] [--close]
//
// --path: what they ask for (`{key}` stands for a key made for the run). --close: they send `Connection: close`, so
// that the server closes each connection once the kernel has taken the body (which then stays queued in the kernel,
// as an orphan, while the reader stays connected).
//
// Only loopback is used (the readers from 127.0.0.1, the well-behaved client from 127.0.0.2), and the script stops by
// itself: after --hold-seconds it closes what is left.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { connect } from "node:net";
import type { Socket } from "node:net";
import { parseArgs } from "node:util";
import { buildRequest, KeepAliveConnection } from "./lib/raw-http.ts";
import { rssMb } from "./lib/proc.ts";
import { freePort, HOST, prepareData, startServerChild } from "./lib/server-child.ts";

const { values: args } = parseArgs({
  options: {
    connections: { type: "string", default: "300" },
    "hold-seconds": { type: "string", default: "20" },
    products: { type: "string", default: "200" },
    path: { type: "string", default: "/docs" },
    close: { type: "boolean", default: false },
  },
});
const CONNECTIONS = Number(args.connections);
const HOLD_MS = Number(args["hold-seconds"]) * 1000;
const PATH = args.path;
const PAGE = 4096;

const log = (line: string) => process.stdout.write(line + "\n");
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** TCP memory the kernel has charged to sockets (all of this network namespace), bytes: sockstat's `mem`, in pages. */
function sockstatBytes(): number {
  const m = /^TCP:.* mem (\d+)/m.exec(readFileSync("/proc/net/sockstat", "utf8"));
  return m ? Number(m[1]) * PAGE : NaN;
}

/** Receive and send queue memory (`ss -tm` skmem r + w) of the TCP sockets on either end of `port`, bytes. */
function ssBytes(port: number): { server: number; client: number } {
  const out = execFileSync("ss", ["-tmnH", `( sport = :${port} or dport = :${port} )`], { encoding: "utf8" });
  const sum = { server: 0, client: 0 };
  const lines = out.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const local = /^\S+\s+\d+\s+\d+\s+(\S+)/.exec(lines[i]!);
    const mem =
      /skmem:\(r(\d+),rb\d+,t\d+,tb\d+,f\d+,w(\d+)/.exec(lines[i]!) ??
      /skmem:\(r(\d+),rb\d+,t\d+,tb\d+,f\d+,w(\d+)/.exec(lines[i + 1] ?? "");
    if (!local || !mem) continue;
    const bytes = Number(mem[1]) + Number(mem[2]);
    if (local[1]!.endsWith(`:${port}`)) sum.server += bytes;
    else sum.client += bytes;
  }
  return sum;
}

/**
 * The server's sockets on `port` by TCP state (ESTAB, FIN-WAIT-1, ...): an orphan (closed by the server, its bytes
 * not yet acknowledged) still holds its queue.
 */
function serverStates(port: number): string {
  const out = execFileSync("ss", ["-tanH", `( sport = :${port} )`], { encoding: "utf8" });
  const states = new Map<string, number>();
  for (const line of out.split("\n")) {
    const state = line.split(/\s+/)[0];
    if (state && state !== "LISTEN") states.set(state, (states.get(state) ?? 0) + 1);
  }
  return [...states].map(([state, n]) => `${n} ${state}`).join(", ") || "none";
}

interface Reader {
  socket: Socket;
  /** The status line answered, once seen; "" before. */
  answer: string;
  closedAt: number | null;
}

async function main(): Promise<number> {
  const port = await freePort();
  const data = await prepareData({ products: Number(args.products), seed: 1, port });
  const server = await startServerChild({ dataDir: data.dataDir, keysFile: data.keysFile, port });
  try {
    const probe = new KeepAliveConnection(port);
    const big = await probe.send(buildRequest("GET", PATH.replace("{key}", data.key), [["Host", HOST]]), false);
    probe.close();
    log(`slow-readers: server pid ${server.pid} on ${HOST}:${port}; ${PATH} is ${big.status}, ${mb(big.body.length)}`);
    await pause(500);
    const base = { sockstat: sockstatBytes(), ss: ssBytes(port), rss: rssMb(server.pid) };
    log(
      `before: sockstat TCP mem ${mb(base.sockstat)}, ss (this port) ${mb(base.ss.server + base.ss.client)}, server RSS ${base.rss.toFixed(1)} MB`,
    );

    const start = Date.now();
    const readers: Reader[] = [];
    for (let i = 0; i < CONNECTIONS; i++) {
      const r: Reader = { socket: connect({ port, host: HOST }), answer: "", closedAt: null };
      // Reads its first buffer-full (to learn the status line), then nothing: the stream stops asking the kernel
      // for more once its buffer holds highWaterMark bytes, as a client that never reads.
      r.socket.once("readable", () => {
        const first = r.socket.read() as Buffer | null;
        r.answer = first?.toString("latin1").split("\r\n")[0] ?? "";
      });
      r.socket.on("error", () => undefined);
      r.socket.on("close", () => (r.closedAt ??= Date.now() - start));
      const headers: [string, string][] = [["Host", HOST]];
      if (args.close) headers.push(["Connection", "close"]);
      r.socket.write(buildRequest("GET", PATH.replace("{key}", data.key), headers));
      readers.push(r);
      if (i % 50 === 49) await pause(20);
    }

    // A well-behaved client meanwhile, from another address: sequential requests on a keep-alive connection, each
    // read in full.
    const good = { ok: 0, other: new Map<string, number>(), ms: [] as number[] };
    const goodAddress = "127.0.0.2";
    let goodConn = new KeepAliveConnection(port, HOST, goodAddress);
    const sample = () => {
      const s = { sockstat: sockstatBytes(), ss: ssBytes(port), rss: rssMb(server.pid) };
      log(
        `  +${((Date.now() - start) / 1000).toFixed(1)} s: server sockets ${serverStates(port)}; sockstat TCP mem +${mb(s.sockstat - base.sockstat)}, ss (this port) server ${mb(s.ss.server)} client ${mb(s.ss.client)}, server RSS ${s.rss.toFixed(1)} MB; good client ${good.ok} x 200`,
      );
      return s;
    };
    let peak = { sockstat: 0, ss: 0, rss: 0 };
    const end = start + HOLD_MS;
    let nextSample = start + 1000;
    while (Date.now() < end) {
      for (const path of ["/docs", `/v1/sales/active.json?apikey=${data.key}`]) {
        const t0 = performance.now();
        try {
          if (goodConn.closed) goodConn = new KeepAliveConnection(port, HOST, goodAddress);
          const res = await goodConn.send(buildRequest("GET", path, [["Host", HOST]]), false);
          if (res.status === 200) good.ok++;
          else good.other.set(String(res.status), (good.other.get(String(res.status)) ?? 0) + 1);
        } catch (err) {
          const what = (err as Error).message;
          good.other.set(what, (good.other.get(what) ?? 0) + 1);
          goodConn.close();
        }
        good.ms.push(performance.now() - t0);
      }
      if (Date.now() >= nextSample) {
        nextSample += 2000;
        const s = sample();
        peak = {
          sockstat: Math.max(peak.sockstat, s.sockstat - base.sockstat),
          ss: Math.max(peak.ss, s.ss.server + s.ss.client),
          rss: Math.max(peak.rss, s.rss),
        };
      }
      await pause(50);
    }
    goodConn.close();
    const answers = new Map<string, number>();
    for (const r of readers) {
      const a = `${r.answer || "(no answer read)"}${r.closedAt === null ? ", still open" : ", closed by the server"}`;
      answers.set(a, (answers.get(a) ?? 0) + 1);
    }
    const sorted = [...good.ms].sort((x, y) => x - y);
    log(
      `peak over ${HOLD_MS / 1000} s: sockstat TCP mem +${mb(peak.sockstat)}, ss (this port) ${mb(peak.ss)}, server RSS ${peak.rss.toFixed(1)} MB`,
    );
    log(`readers: ${JSON.stringify(Object.fromEntries(answers))}`);
    log(
      `good client: ${good.ok} x 200, others ${JSON.stringify(Object.fromEntries(good.other))}; p50 ${sorted[Math.floor(sorted.length / 2)]?.toFixed(1)} ms, max ${sorted[sorted.length - 1]?.toFixed(1)} ms`,
    );
    for (const r of readers) r.socket.destroy();
    return 0;
  } finally {
    await server.stop();
    await data.cleanup();
  }
}

process.exitCode = await main();
