// Clients that never read what they asked for: one address may have at most maxSendingPerAddress connections holding
// bytes it has not acknowledged (the rest of its requests are answered 503), such bytes not acknowledged within
// sendTimeout get their connection reset, which frees its kernel buffers, and clients that read get their 200s
// meanwhile, however many large responses they take. The kernel's own account (/proc/net/tcp) says what is held.
import { execFile } from "node:child_process";
import { once } from "node:events";
import { readFile } from "node:fs/promises";
import { connect } from "node:net";
import type { Socket } from "node:net";
import { join } from "node:path";
import { connect as tlsConnect } from "node:tls";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SERVER_DEFAULTS, startServer } from "../../../src/serve/http/server.ts";
import type { RunningServer, ServerOptions } from "../../../src/serve/http/server.ts";
import { startTestApi, tempDir, withKey } from "../../helpers/fixture.ts";
import type { TestApi } from "../../helpers/fixture.ts";

const run = promisify(execFile);

/** Polls `condition` every 10 ms until it holds, failing after `ms` with what `state` says then. */
async function waitFor(condition: () => boolean | Promise<boolean>, ms: number, state: () => unknown): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out; state: ${JSON.stringify(state())}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * The server-side TCP sockets of `port` (IPv4, /proc/net/tcp): their state (hex: 01 established, 04 FIN-WAIT-1) and
 * the bytes written to them and not acknowledged.
 */
async function serverSockets(port: number): Promise<{ state: string; txQueue: number }[]> {
  const hexPort = port.toString(16).toUpperCase().padStart(4, "0");
  const out: { state: string; txQueue: number }[] = [];
  for (const line of (await readFile("/proc/net/tcp", "utf8")).split("\n").slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 5 || !f[1]!.endsWith(`:${hexPort}`) || f[3] === "0A") continue; // 0A: the listening socket
    out.push({ state: f[3]!, txQueue: parseInt(f[4]!.split(":")[0]!, 16) });
  }
  return out;
}

/** A client that asks for `path` and never reads the answer (beyond the status line in its first buffer-full). */
interface Reader {
  socket: Socket;
  /** The status code answered, once its first bytes came; 0 before. */
  status: number;
  closed: boolean;
  error: string;
  /** Bytes read, head included (see readOn). */
  received: number;
}

/**
 * Opens a connection to `host` from `from` (plain, or TLS with `tls`), sends one GET for `path` (with `Connection:
 * <connection>` if given), and stops reading.
 */
function nonReader(
  port: number,
  path: string,
  { from = "127.0.0.1", host = "127.0.0.1", tls = false, connection = "" } = {},
): Reader {
  const tcp = connect({ host, port, localAddress: from });
  const socket = tls ? tlsConnect({ socket: tcp, rejectUnauthorized: false }) : tcp;
  const r: Reader = { socket, status: 0, closed: false, error: "", received: 0 };
  // One read, for the status line; the stream then stops asking the kernel for more once its buffer is full.
  socket.once("readable", () => {
    const first = socket.read() as Buffer | null;
    r.received += first?.length ?? 0;
    r.status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(first?.toString("latin1") ?? "")?.[1] ?? -1);
  });
  socket.on("error", (err: NodeJS.ErrnoException) => (r.error = err.code ?? err.message));
  socket.on("close", () => (r.closed = true));
  socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${connection ? `Connection: ${connection}\r\n` : ""}\r\n`);
  return r;
}

/** Makes `r` a client that reads after all, counting what it reads. */
function readOn(r: Reader): void {
  r.socket.on("data", (c: Buffer) => (r.received += c.length));
}

/** Statuses of `readers`, counted: {"200": 4, "503": 46}. */
const tally = (readers: Reader[]) =>
  readers.reduce<Record<string, number>>((t, r) => ((t[r.status] = (t[r.status] ?? 0) + 1), t), {});

let api: TestApi;
let docsBytes: number;
const servers: RunningServer[] = [];
const readers: Reader[] = [];

beforeAll(async () => {
  api = await startTestApi();
  const docs = await api.get("/docs");
  docsBytes = (await docs.arrayBuffer()).byteLength;
  // More than a loopback connection's kernel buffers take from a client that does not read (about 2.4 MB here):
  // the rest stays with node, and the response is being sent until the client reads.
  expect(docsBytes).toBeGreaterThan(2_000_000);
}, 60_000);

afterAll(async () => {
  for (const r of readers) r.socket.destroy();
  await Promise.all(servers.map((s) => s.close()));
  await api.close();
});

async function serve(options: ServerOptions, host = "127.0.0.1"): Promise<RunningServer> {
  const server = await startServer(api.handler, host, 0, options);
  servers.push(server);
  return server;
}

/** Server-side sockets of `port` holding more than 100 KB unacknowledged. */
const holding = async (port: number) => (await serverSockets(port)).filter((s) => s.txQueue > 100_000);

describe("clients that do not read", () => {
  it("defaults: 16 stalled connections per address, 60 s, from 256 KiB, stalled after 1 s", () => {
    expect([
      SERVER_DEFAULTS.maxSendingPerAddress,
      SERVER_DEFAULTS.sendTimeout,
      SERVER_DEFAULTS.sendTrackBytes,
      SERVER_DEFAULTS.sendStall,
    ]).toEqual([16, 60_000, 262_144, 1_000]);
  });

  it("a client that reads, with many connections at once from one address (a CDN, a proxy), is never refused", async () => {
    const { port } = await serve({ maxSendingPerAddress: 2 });
    for (let round = 0; round < 3; round++) {
      const all = await Promise.all(Array.from({ length: 16 }, () => fetchFrom(port, "/docs", "127.0.0.5")));
      expect(all.map((r) => [r.status, r.bytes])).toEqual(all.map(() => [200, docsBytes]));
    }
  }, 60_000);

  it("a burst of non-readers is served, then, once stalled, cut to the cap (the rest reset) and refused", async () => {
    const { port } = await serve({ maxSendingPerAddress: 2, sendStall: 300 });
    const burst = Array.from({ length: 8 }, () => nonReader(port, "/docs", { from: "127.0.0.6" }));
    readers.push(...burst);
    await waitFor(
      () => burst.every((r) => r.status !== 0),
      5_000,
      () => tally(burst),
    );
    expect(tally(burst)).toEqual({ 200: 8 }); // none had stalled yet
    // Stalled: all but the oldest two are reset, their kernel buffers freed (the clients, reading nothing, do not
    // notice yet).
    let held = -1;
    await waitFor(
      async () => (held = (await holding(port)).length) <= 2,
      5_000,
      () => ({ held }),
    );
    const next = nonReader(port, "/docs", { from: "127.0.0.6" });
    readers.push(next);
    await waitFor(
      () => next.status !== 0,
      5_000,
      () => next,
    );
    expect(next.status).toBe(503);
    // Another address is not affected.
    expect(await fetchFrom(port, "/docs", "127.0.0.7")).toEqual({ status: 200, bytes: docsBytes });
  }, 30_000);

  it("one address gets at most maxSendingPerAddress large bodies unread, the rest a 503; a reading client gets 200s meanwhile", async () => {
    const { port } = await serve({ maxSendingPerAddress: 4, sendStall: 0 });
    const stuck = Array.from({ length: 50 }, () => nonReader(port, "/docs"));
    readers.push(...stuck);
    await waitFor(
      () => stuck.every((r) => r.status !== 0),
      10_000,
      () => tally(stuck),
    );
    expect(tally(stuck)).toEqual({ 200: 4, 503: 46 });
    // The kernel holds the four bodies, no more.
    const held = await serverSockets(port);
    expect(held.filter((s) => s.txQueue > 100_000)).toHaveLength(4);
    expect(held.reduce((sum, s) => sum + s.txQueue, 0)).toBeLessThan(4 * docsBytes + 50 * 1_000);

    // Another address is not held back: the whole page and an API response, read as they come.
    for (const path of ["/docs", withKey(api, "/v1/sales/active.json"), "/docs"]) {
      const res = await fetchFrom(port, path, "127.0.0.2");
      expect([path, res.status]).toEqual([path, 200]);
      if (path === "/docs") expect(res.bytes).toBe(docsBytes);
    }
    // The first address is refused, cheaply, while its four are unread.
    const refused = nonReader(port, "/docs");
    readers.push(refused);
    await waitFor(
      () => refused.status !== 0,
      5_000,
      () => refused,
    );
    expect(refused.status).toBe(503);

    // Two of them go away (the client's close resets them, with bytes unread): two more may be sent.
    for (const r of stuck.filter((r) => r.status === 200).slice(0, 2)) r.socket.destroy();
    await waitFor(
      async () => (await holding(port)).length === 2,
      5_000,
      () => "",
    );
    const again = Array.from({ length: 3 }, () => nonReader(port, "/docs"));
    readers.push(...again);
    await waitFor(
      () => again.every((r) => r.status !== 0),
      5_000,
      () => tally(again),
    );
    expect(tally(again)).toEqual({ 200: 2, 503: 1 });
  }, 60_000);

  it("counts a body the server has closed on but the kernel still holds (Connection: close): the address stays at its cap", async () => {
    const { port } = await serve({ maxSendingPerAddress: 2, sendStall: 0 });
    const closing = Array.from({ length: 2 }, () => nonReader(port, "/docs", { connection: "close" }));
    readers.push(...closing);
    await waitFor(
      () => closing.every((r) => r.status !== 0),
      5_000,
      () => tally(closing),
    );
    expect(tally(closing)).toEqual({ 200: 2 });
    // node has closed both (FIN after the body); the kernel keeps their bytes queued, as orphans, for the client.
    await waitFor(
      async () => (await serverSockets(port)).filter((s) => s.state === "04").length === 2,
      5_000,
      () => "",
    );
    const next = nonReader(port, "/docs");
    readers.push(next);
    await waitFor(
      () => next.status !== 0,
      5_000,
      () => next,
    );
    expect(next.status).toBe(503);
    // The client goes: the orphans are reset and gone, and so is the count.
    for (const r of closing) r.socket.destroy();
    await waitFor(
      async () => (await holding(port)).length === 0,
      5_000,
      () => "",
    );
    const after = nonReader(port, "/docs");
    readers.push(after);
    await waitFor(
      () => after.status !== 0,
      5_000,
      () => after,
    );
    expect(after.status).toBe(200);
  }, 30_000);

  it("a client that reads gets every large body, however many, from one address", async () => {
    const { port } = await serve({ maxSendingPerAddress: 2, sendStall: 0 });
    for (let i = 0; i < 12; i++) {
      const res = await fetchFrom(port, "/docs", "127.0.0.3");
      expect([i, res.status, res.bytes]).toEqual([i, 200, docsBytes]);
    }
  }, 30_000);

  it("resets a connection whose bytes are not acknowledged within sendTimeout: its kernel buffers are freed", async () => {
    const { port } = await serve({ maxSendingPerAddress: 4, sendTimeout: 300, sendStall: 0 });
    const started = Date.now();
    const stuck = Array.from({ length: 4 }, () => nonReader(port, "/docs"));
    readers.push(...stuck);
    await waitFor(
      () => stuck.every((r) => r.status !== 0),
      15_000, // an upper bound: on a loaded machine the sweep that resets them may run seconds late
      () => tally(stuck),
    );
    expect(tally(stuck)).toEqual({ 200: 4 });
    expect(await holding(port)).toHaveLength(4);
    // Nothing of them left in the kernel: no socket, no orphan (a plain close would leave each in FIN-WAIT-1).
    await waitFor(
      async () => (await serverSockets(port)).length === 0,
      15_000,
      () => "",
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    // The clients, reading again, find their connections closed, their bodies cut short.
    for (const r of stuck) readOn(r);
    await waitFor(
      () => stuck.every((r) => r.closed),
      15_000,
      () => stuck.map((r) => [r.closed, r.received]),
    );
    for (const r of stuck) expect(r.received).toBeLessThan(docsBytes / 2);
    // Their places are free again.
    const next = nonReader(port, "/docs");
    readers.push(next);
    await waitFor(
      () => next.status !== 0,
      15_000,
      () => next,
    );
    expect(next.status).toBe(200);
  }, 90_000);

  it("keeps an idle connection whose body is unread open past keepAliveTimeout (a close would orphan its bytes), until sendTimeout resets it", async () => {
    // node closes an idle connection 1 s after keepAliveTimeout (it says `Keep-Alive: timeout=N` and allows for delay).
    const { port } = await serve({ keepAliveTimeout: 100, sendTimeout: 2_000 });
    const started = Date.now();
    const stuck = nonReader(port, "/docs");
    readers.push(stuck);
    const states = new Set<string>();
    await waitFor(
      async () => {
        const sockets = await serverSockets(port);
        for (const s of sockets) states.add(s.state);
        return stuck.status !== 0 && sockets.length === 0;
      },
      5_000,
      () => [...states],
    );
    expect(stuck.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_900);
    expect([...states]).toEqual(["01"]); // established until reset: never FIN-WAIT-1 (04) with its bytes queued
    // A client that read its body is closed when idle, as before (after a look at the kernel's account).
    const reading = connect({ host: "127.0.0.1", port, localAddress: "127.0.0.4" });
    let bytes = 0;
    reading.on("data", (c: Buffer) => (bytes += c.length));
    reading.write("GET /docs HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    const opened = Date.now();
    await once(reading, "close");
    expect(bytes).toBeGreaterThan(docsBytes);
    expect(Date.now() - opened).toBeLessThan(1_900);
  }, 30_000);

  it("reads the kernel's account of IPv6 connections, and of IPv4 ones on an IPv6 socket (/proc/net/tcp6)", async () => {
    // [the server's address, the client's]: an IPv4 client of a socket bound to an IPv4-mapped address is listed in
    // tcp6, as it would be by a server listening on `::`.
    for (const [host, client] of [
      ["::1", "::1"],
      ["::ffff:127.0.0.1", "127.0.0.1"],
    ]) {
      const { port } = await serve({ maxSendingPerAddress: 2, sendStall: 0 }, host);
      const stuck = Array.from({ length: 3 }, () => nonReader(port, "/docs", { host: client, from: client }));
      readers.push(...stuck);
      await waitFor(
        () => stuck.every((r) => r.status !== 0),
        5_000,
        () => stuck.map((r) => [r.status, r.error]),
      );
      expect([host, tally(stuck)]).toEqual([host, { 200: 2, 503: 1 }]);
    }
  }, 30_000);

  it("does the same over TLS (the reset goes to the TCP connection under it)", async () => {
    const dir = await tempDir("fsa-send-tls-");
    const [cert, key] = [join(dir, "c.pem"), join(dir, "k.pem")];
    await run("openssl", [
      ..."req -x509 -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -days 2".split(" "),
      ..."-addext subjectAltName=IP:127.0.0.1".split(" "),
      ...["-keyout", key, "-out", cert],
    ]);
    const tls = { cert: await readFile(cert), key: await readFile(key) };
    const { port } = await serve({ tls, maxSendingPerAddress: 2, sendTimeout: 300, sendStall: 0 });
    const stuck = Array.from({ length: 3 }, () => nonReader(port, "/docs", { tls: true }));
    readers.push(...stuck);
    await waitFor(
      () => stuck.every((r) => r.status !== 0),
      5_000,
      () => tally(stuck),
    );
    expect(tally(stuck)).toEqual({ 200: 2, 503: 1 });
    await waitFor(
      async () => (await serverSockets(port)).every((s) => s.txQueue === 0),
      5_000,
      () => "",
    );
    expect((await serverSockets(port)).filter((s) => s.state === "04")).toEqual([]);
    const reset = stuck.filter((r) => r.status === 200);
    for (const r of reset) readOn(r);
    await waitFor(
      () => reset.every((r) => r.closed),
      5_000,
      () => reset.map((r) => [r.closed, r.received]),
    );
    for (const r of reset) expect(r.received).toBeLessThan(docsBytes / 2);
  }, 30_000);
});

/** GET `path` from `localAddress`, reading the whole response: its status and body length. */
async function fetchFrom(port: number, path: string, localAddress: string): Promise<{ status: number; bytes: number }> {
  const socket = connect({ host: "127.0.0.1", port, localAddress });
  socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
  const chunks: Buffer[] = [];
  socket.on("data", (c: Buffer) => chunks.push(c));
  await once(socket, "close");
  const all = Buffer.concat(chunks);
  const headEnd = all.indexOf("\r\n\r\n");
  const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(all.subarray(0, headEnd).toString("latin1"))?.[1] ?? -1);
  return { status, bytes: all.length - headEnd - 4 };
}
