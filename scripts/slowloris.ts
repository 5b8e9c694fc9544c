// Slowloris against the real server in a child process: 1,000 connections trickle header bytes while a
// well-behaved client keeps asking; prints what the good client got and how the server handled the slow ones.
//
//   tsx scripts/slowloris.ts [--connections 1000] [--attack-seconds 30] [--byte-every 1000] [--products 500]
//
// Only 127.0.0.1 is attacked, and the script stops by itself: the good client runs for --attack-seconds, then
// the script waits up to 45 s more for the server to close the slow connections, then closes what is left.
import { connect } from "node:net";
import type { Socket } from "node:net";
import { parseArgs } from "node:util";
import { buildRequest, KeepAliveConnection, NoResponseError } from "./lib/raw-http.ts";
import { rssMb } from "./lib/proc.ts";
import { freePort, HOST, prepareData, quantile, startServerChild } from "./lib/server-child.ts";
import { runMain } from "./lib/run-main.ts";

const { values: args } = parseArgs({
  options: {
    connections: { type: "string", default: "1000" },
    "attack-seconds": { type: "string", default: "30" },
    "byte-every": { type: "string", default: "1000" },
    products: { type: "string", default: "500" },
    "good-clients": { type: "string", default: "4" },
  },
});
const CONNECTIONS = Number(args.connections);
const ATTACK_MS = Number(args["attack-seconds"]) * 1000;
const BYTE_EVERY_MS = Number(args["byte-every"]);
const GOOD_CLIENTS = Number(args["good-clients"]);
/** After the good client stops, how long to wait for the server to close the slow connections. */
const DRAIN_MS = 45_000;
/** A good request slower than this, or failing, counts against the server. */
const GOOD_SLO_MS = 1000;

const log = (line: string) => process.stdout.write(line + "\n");

interface Slow {
  socket: Socket;
  openedAt: number;
  bytesSent: number;
  /** ms after opening at which the server closed it, and what it said first. */
  closedAt: number | null;
  answer: string;
  byUs: boolean;
}

/** The good client for `ms`: sequential keep-alive requests over a few connections, plus a fresh connection every 10th. */
async function goodClient(port: number, key: string, paths: readonly string[], ms: number) {
  const latencies: number[] = [];
  const failures: string[] = [];
  const statuses = new Map<number, number>();
  const end = Date.now() + ms;
  await Promise.all(
    Array.from({ length: GOOD_CLIENTS }, async (_, w) => {
      let c: KeepAliveConnection | null = null;
      for (let n = 0; Date.now() < end; n++) {
        const fresh = n % 10 === 0;
        if (fresh || !c || c.closed) {
          c?.close();
          c = new KeepAliveConnection(port);
        }
        const path = paths[(n * GOOD_CLIENTS + w) % paths.length]!;
        const t0 = performance.now();
        try {
          const res = await Promise.race([
            c.send(
              buildRequest("GET", `${path}?apikey=${key}`, [
                ["Host", HOST],
                ["Accept-Encoding", "gzip"],
              ]),
              false,
            ),
            new Promise<never>((_, reject) => setTimeout(() => reject(new Error("no answer in 10 s")), 10_000).unref()),
          ]);
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          if (res.status !== 200) failures.push(`${path} -> ${res.status}`);
        } catch (err) {
          failures.push(
            `${path}: ${err instanceof NoResponseError || err instanceof Error ? err.message : String(err)}${fresh ? " (fresh connection)" : ""}`,
          );
          c.close();
          c = null;
        }
        latencies.push(performance.now() - t0);
      }
      c?.close();
    }),
  );
  return { latencies, failures, statuses };
}

async function main(): Promise<number> {
  const port = await freePort();
  log(
    `slowloris: ${CONNECTIONS} slow connections, one header byte every ${BYTE_EVERY_MS} ms each; good client: ${GOOD_CLIENTS} connections for ${ATTACK_MS / 1000} s`,
  );
  const data = await prepareData({ products: Number(args.products), seed: 1, port });
  const server = await startServerChild({ dataDir: data.dataDir, keysFile: data.keysFile, port });
  try {
    // The good client asks only for resources that exist now (products not on sale are 404s).
    const paths: string[] = [];
    const probe = new KeepAliveConnection(port);
    for (const path of data.paths) {
      if (paths.length >= 200) break;
      const res = await probe.send(buildRequest("GET", `${path}?apikey=${data.key}`, [["Host", HOST]]), false);
      if (res.status === 200) paths.push(path);
    }
    probe.close();
    log(
      `slowloris: server pid ${server.pid} on ${HOST}:${port}, RSS ${rssMb(server.pid).toFixed(1)} MB; the good client cycles through ${paths.length} resources`,
    );

    // Baseline: the good client alone for 5 s.
    const base = await goodClient(port, data.key, paths, 5000);
    const sortedBase = [...base.latencies].sort((a, b) => a - b);
    log(
      `baseline (no attack, 5 s): ${base.latencies.length} requests, ${base.failures.length} failed, p50 ${quantile(sortedBase, 0.5).toFixed(2)} ms, p99 ${quantile(sortedBase, 0.99).toFixed(2)} ms`,
    );

    // The attack: each connection sends a request line and then one header byte at a time, never finishing.
    const attackStart = Date.now();
    const slow: Slow[] = [];
    const trickle = `GET /v1/sales/active.json?apikey=${data.key} HTTP/1.1\r\nHost: ${HOST}\r\nX-Slow: ${"a".repeat(100_000)}`;
    let openFailures = 0;
    for (let i = 0; i < CONNECTIONS; i++) {
      const s: Slow = {
        socket: connect({ port, host: HOST, localAddress: `127.0.2.${(i % 250) + 1}` }),
        openedAt: Date.now(),
        bytesSent: 0,
        closedAt: null,
        answer: "",
        byUs: false,
      };
      s.socket.setNoDelay(true);
      s.socket.on("data", (d: Buffer) => {
        if (!s.answer) s.answer = d.toString("latin1").split("\r\n")[0] ?? "";
      });
      s.socket.on("error", (err: NodeJS.ErrnoException) => {
        if (!s.answer) s.answer = `error ${err.code ?? err.message}`;
        if (err.code === "ECONNREFUSED") openFailures++;
      });
      s.socket.on("close", () => {
        s.closedAt ??= Date.now() - s.openedAt;
      });
      slow.push(s);
      if (i % 100 === 99) await new Promise((r) => setTimeout(r, 50)); // open them over ~0.5 s
    }
    const ticker = setInterval(() => {
      for (const s of slow) {
        if (s.closedAt !== null || s.socket.destroyed) continue;
        const ch = trickle[s.bytesSent];
        if (ch === undefined) continue;
        s.socket.write(ch);
        s.bytesSent++;
      }
    }, BYTE_EVERY_MS);
    const rssAttack: number[] = [];
    const sampler = setInterval(() => rssAttack.push(rssMb(server.pid)), 2000);

    await new Promise((r) => setTimeout(r, 1000)); // let every slow connection start its request
    const open1 = slow.filter((s) => s.closedAt === null).length;
    log(
      `attack: ${slow.length} connections opened in ${((Date.now() - attackStart) / 1000).toFixed(1)} s (${openFailures} refused); ${open1} open after 1 s`,
    );
    const good = await goodClient(port, data.key, paths, ATTACK_MS);
    const sortedGood = [...good.latencies].sort((a, b) => a - b);
    const openAfterGood = slow.filter((s) => s.closedAt === null).length;

    // Wait for the server to deal with the rest, up to DRAIN_MS.
    const drainEnd = Date.now() + DRAIN_MS;
    while (Date.now() < drainEnd && slow.some((s) => s.closedAt === null)) await new Promise((r) => setTimeout(r, 250));
    clearInterval(ticker);
    clearInterval(sampler);
    const leftOpen = slow.filter((s) => s.closedAt === null);
    for (const s of leftOpen) {
      s.byUs = true;
      s.socket.destroy();
    }

    log(
      `good client under attack (${ATTACK_MS / 1000} s): ${good.latencies.length} requests, ${good.latencies.length - good.failures.length} succeeded, ${good.failures.length} failed; statuses ${JSON.stringify(Object.fromEntries(good.statuses))}`,
    );
    log(
      `  latency ms: p50 ${quantile(sortedGood, 0.5).toFixed(2)}, p90 ${quantile(sortedGood, 0.9).toFixed(2)}, p99 ${quantile(sortedGood, 0.99).toFixed(2)}, max ${(sortedGood[sortedGood.length - 1] ?? NaN).toFixed(2)}`,
    );
    if (good.failures.length) log(`  failures, e.g.: ${[...new Set(good.failures)].slice(0, 5).join("; ")}`);

    const closedByServer = slow.filter((s) => !s.byUs && s.closedAt !== null);
    const times = closedByServer.map((s) => s.closedAt!).sort((a, b) => a - b);
    const answers = new Map<string, number>();
    for (const s of closedByServer)
      answers.set(
        s.answer || "(closed without an answer)",
        (answers.get(s.answer || "(closed without an answer)") ?? 0) + 1,
      );
    const buckets = new Map<number, number>();
    for (const t of times) buckets.set(Math.floor(t / 5000) * 5, (buckets.get(Math.floor(t / 5000) * 5) ?? 0) + 1);
    log(
      `slow connections: ${closedByServer.length} of ${slow.length} closed by the server, ${leftOpen.length} left open at the end (closed by this script); ${openAfterGood} were still open when the good client stopped`,
    );
    if (times.length)
      log(
        `  closed after (s from opening): min ${(times[0]! / 1000).toFixed(1)}, p50 ${(quantile(times, 0.5) / 1000).toFixed(1)}, max ${(times[times.length - 1]! / 1000).toFixed(1)}; by 5 s bucket: ${[...buckets].map(([b, n]) => `${b}-${b + 5}s: ${n}`).join(", ")}`,
      );
    log(`  the server's first words: ${[...answers].map(([a, n]) => `${JSON.stringify(a)} x ${n}`).join(", ")}`);
    log(
      `  header bytes trickled per connection before it was closed: max ${Math.max(0, ...slow.map((s) => s.bytesSent))}`,
    );
    log(
      `server RSS during the attack: ${rssAttack.length ? `${Math.min(...rssAttack).toFixed(0)}-${Math.max(...rssAttack).toFixed(0)} MB` : "n/a"}; server ${server.exit() ? `EXITED ${JSON.stringify(server.exit())}` : "still running"}`,
    );

    const goodFailed =
      good.failures.length > 0 || quantile(sortedGood, 0.99) > GOOD_SLO_MS || good.latencies.length === 0;
    const verdict = !goodFailed && !server.exit() && leftOpen.length === 0;
    log(
      verdict
        ? "PASS: the good client was served throughout, and the server closed every slow connection"
        : "FAIL: see above",
    );
    return verdict ? 0 : 1;
  } finally {
    await server.stop();
    await data.cleanup();
  }
}

runMain("slowloris", main);
