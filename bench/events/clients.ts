// The events benchmark's clients, in a process of their own (pinned to the other core): either event streams that
// note when a sale's `sale.begins` reaches them, or polling clients that ask for the active list once a second each.
// Usage: node --import tsx bench/events/clients.ts <config.json>
// Prints `READY <n>` once its n streams are open (pollers: once each has had an answer), then at `reportAtMs` one line
// `RESULT <json>`, and keeps its connections open until SIGTERM (so that closing them is not measured).
import { readFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { connect } from "node:net";
import { setPriority } from "node:os";
import type { Socket } from "node:net";
import { loopbackSource } from "../lib/loopback-source.ts";

/** What the benchmark hands the process. */
export type ClientsConfig = {
  host: string;
  port: number;
  /** The sale whose beginning is measured (its sale_key), and that instant, epoch ms. */
  saleKey: string;
  instantMs: number;
  /** When to print the result, epoch ms. */
  reportAtMs: number;
} & (
  | { mode: "streams"; keys: string[]; count: number; perKey: number }
  | { mode: "pollers"; key: string; path: string; count: number }
);

/** A stream's result: when (epoch ms) the sale's beginning reached it, the frame's `id` and `sent`, and how often. */
export interface StreamResult {
  receivedMs: number | null;
  id: string | null;
  sentMs: number | null;
  times: number;
  ended: boolean;
}

/** A streams process's results, and its CPU time from 0.2 s before the instant to 1 s after it, ms. */
export interface StreamsResult {
  streams: StreamResult[];
  cpuMs: number | null;
}

/** The polling process's results, and its CPU time from 0.2 s before the instant to 1 s after it, ms. */
export interface PollersResult {
  pollers: PollerResult[];
  cpuMs: number | null;
}

export interface PollerResult {
  /** Epoch ms each answer was complete, and its latency (ms) and status. */
  answers: [number, number, number][];
  /** Polls skipped because the previous one was still out. */
  skipped: number;
  /** Epoch ms the first answer after the instant came with another ETag than the list had before it, or null. */
  changedMs: number | null;
  errors: string[];
}

/** Wall-clock now with sub-millisecond precision. */
const ORIGIN = performance.timeOrigin;
const now = () => ORIGIN + performance.now();
/** Streams being opened at once. */
const OPENING = 200;

const config = JSON.parse(readFileSync(process.argv[2]!, "utf8")) as ClientsConfig;
// The streams' clients yield their shared core to the polling clients: reading 10,000 heartbeats or events at once,
// they would otherwise add their own time to the pollers' latency.
if (config.mode === "streams") setPriority(10);

/** Where every stream's bytes are read into (each read is handled before the next one is made). */
const READ_BUFFER = Buffer.allocUnsafe(64 * 1024);
/** Bytes kept per stream, and reads timed per stream, from a second before the instant on. */
const TAPE_BYTES = 4096;
const TAPE_READS = 8;

/**
 * What each stream of this process read from a second before the instant on: its bytes and when each read came, in
 * buffers allocated (and written once) before. A read costs the same few steps every time, heartbeats included (so
 * the code is warm at the instant), and allocates next to nothing (so no collector is set off): the time, one copy,
 * two numbers. The frames are looked at after the measured second.
 */
function createTape(count: number) {
  const bytes = Buffer.allocUnsafe(count * TAPE_BYTES).fill(0);
  const kept = new Int32Array(count);
  const reads = new Int32Array(count);
  const ends = new Int32Array(count * TAPE_READS);
  const times = new Float64Array(count * TAPE_READS);
  return {
    /** Records a read of stream `i` that came at `at`: the first `n` bytes of `buf` (what fits). */
    record(i: number, n: number, buf: Buffer, at: number): void {
      const k = kept[i]!;
      const fits = Math.min(n, TAPE_BYTES - k);
      bytes.set(buf.subarray(0, fits), i * TAPE_BYTES + k);
      kept[i] = k + fits;
      const r = reads[i]!;
      if (r < TAPE_READS) {
        ends[i * TAPE_READS + r] = k + fits;
        times[i * TAPE_READS + r] = at;
        reads[i] = r + 1;
      }
    },
    /** Forgets what was recorded so far. */
    rewind(): void {
      kept.fill(0);
      reads.fill(0);
    },
    /**
     * Stream `i`'s sale.begins: when the read that completed the sale's key in it came (null: not read, or past
     * what the tape holds), how many times the key came, and the frame's `id` and `sent`.
     */
    result(i: number, marker: Buffer): Omit<StreamResult, "ended"> {
      const tape = bytes.subarray(i * TAPE_BYTES, i * TAPE_BYTES + kept[i]!);
      let first = -1;
      let seen = 0;
      for (let at = tape.indexOf(marker); at >= 0; at = tape.indexOf(marker, at + marker.length)) {
        seen++;
        if (first < 0) first = at;
      }
      if (first < 0) return { receivedMs: null, id: null, sentMs: null, times: 0 };
      let r = 0;
      while (r < reads[i]! && ends[i * TAPE_READS + r]! < first + marker.length) r++;
      const text = tape.toString("latin1");
      const frame = text.slice(text.lastIndexOf("id: ", first), text.indexOf("\n\n", first));
      const m = /^id: (\S+)\nevent: sale\.begins\ndata: .*"sent":"([^"]+)"/.exec(frame);
      return {
        receivedMs: r < reads[i]! ? times[i * TAPE_READS + r]! : null,
        id: m ? m[1]! : null,
        sentMs: m ? Date.parse(m[2]!) : null,
        times: seen,
      };
    },
  };
}
type Tape = ReturnType<typeof createTape>;

/**
 * Opens stream `i`; resolves once its head and first comment have come. Its reads bypass node's stream machinery
 * (`onread`) and go to the tape: with 10,000 streams on one core, what the clients spend on each read is part of the
 * delay measured.
 */
function openStream(key: string, i: number, tape: Tape, out: { ended: boolean }): Promise<Socket> {
  return new Promise((resolve, reject) => {
    let head = "";
    let open = false;
    const onRead = (n: number, buf: Buffer): boolean => {
      const at = now();
      if (open) {
        tape.record(i, n, buf, at);
        return true;
      }
      head += buf.toString("latin1", 0, n);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) return true;
      if (!head.startsWith("HTTP/1.1 200")) reject(new Error(`stream: ${head.slice(0, 300)}`));
      else if (head.includes("retry:", end)) {
        open = true;
        resolve(socket);
      }
      return true;
    };
    const socket = connect({
      port: config.port,
      host: config.host,
      localAddress: loopbackSource(key),
      onread: { buffer: READ_BUFFER, callback: onRead },
    });
    socket.setNoDelay(true);
    socket.on("error", (err) => (open ? undefined : reject(err)));
    socket.on("close", () => {
      out.ended = true;
      if (!open) reject(new Error("stream closed before it opened"));
    });
    socket.write(
      `GET /v1/events?apikey=${key} HTTP/1.1\r\nHost: ${config.host}:${config.port}\r\nAccept: text/event-stream\r\n\r\n`,
    );
  });
}

async function runStreams(c: Extract<ClientsConfig, { mode: "streams" }>): Promise<() => unknown> {
  const tape = createTape(c.count);
  const ended = Array.from({ length: c.count }, () => ({ ended: false }));
  let next = 0;
  const opener = async () => {
    for (let i = next++; i < c.count; i = next++)
      await openStream(c.keys[Math.floor(i / c.perKey)]!, i, tape, ended[i]!);
  };
  await Promise.all(Array.from({ length: OPENING }, opener));
  setTimeout(() => tape.rewind(), Math.max(0, config.instantMs - 1000 - now()));
  const cpu = measureCpu();
  process.stdout.write(`READY ${c.count}\n`);
  const marker = Buffer.from(`"sale_key":"${config.saleKey}"`);
  return (): StreamsResult => ({
    streams: ended.map((e, i) => ({ ...tape.result(i, marker), ended: e.ended })),
    cpuMs: cpu.ms,
  });
}

/** A polling client: its connection, its second's phase, the ETags it holds, and what it saw. */
interface Poller {
  agent: Agent;
  phase: number;
  etag: string | null;
  before: string | null;
  busy: boolean;
  result: PollerResult;
}

async function runPollers(c: Extract<ClientsConfig, { mode: "pollers" }>): Promise<() => unknown> {
  const url = `/${c.path.replace(/^\//, "")}?apikey=${c.key}`;
  const pollers = Array.from({ length: c.count }, (_, i): Poller => ({
    agent: new Agent({ keepAlive: true, maxSockets: 1 }),
    // Each client's own second: phases spread evenly over it.
    phase: (i * 1000) / c.count,
    etag: null,
    before: null,
    busy: false,
    result: { answers: [], skipped: 0, changedMs: null, errors: [] },
  }));
  const poll = (p: Poller) =>
    new Promise<void>((resolve) => {
      if (p.busy) {
        p.result.skipped++;
        return resolve();
      }
      p.busy = true;
      const started = now();
      const headers: Record<string, string> = { "Accept-Encoding": "br, gzip" };
      if (p.etag) headers["If-None-Match"] = p.etag;
      const req = request({ host: config.host, port: config.port, path: url, agent: p.agent, headers }, (res) => {
        res.resume();
        res.on("end", () => {
          const done = now();
          p.busy = false;
          p.result.answers.push([done, done - started, res.statusCode ?? 0]);
          const etag = res.headers.etag ?? null;
          if (res.statusCode === 200 && etag) {
            // The ETag the list had before the instant (an answer completed before it cannot show the sale).
            if (done < config.instantMs) p.before = etag;
            else if (etag !== p.before && p.result.changedMs === null) p.result.changedMs = done;
            p.etag = etag;
          }
          resolve();
        });
      });
      req.on("error", (err) => {
        p.busy = false;
        if (p.result.errors.length < 5) p.result.errors.push(err.message);
        resolve();
      });
      req.end();
    });
  // The first answer of each, before READY: every client has its connection and the list's ETag.
  await Promise.all(pollers.map(poll));
  for (const p of pollers) p.result.answers = []; // that burst of first requests is not the polling measured
  process.stdout.write(`READY ${c.count}\n`);
  const start = Math.ceil(now() / 1000) * 1000;
  for (const p of pollers) {
    let k = 0;
    const tick = () => {
      void poll(p);
      k++;
      setTimeout(tick, Math.max(0, start + p.phase + k * 1000 - now()));
    };
    setTimeout(tick, Math.max(0, start + p.phase - now()));
  }
  const cpu = measureCpu();
  return (): PollersResult => ({ pollers: pollers.map((p) => p.result), cpuMs: cpu.ms });
}

/** This process's CPU time from 0.2 s before the instant to 1 s after it (`ms`, once known). */
function measureCpu(): { ms: number | null } {
  const out: { ms: number | null } = { ms: null };
  const at = (ms: number, fn: () => void) => setTimeout(fn, Math.max(0, ms - now()));
  at(config.instantMs - 200, () => {
    const before = process.cpuUsage();
    at(config.instantMs + 1000, () => {
      const { user, system } = process.cpuUsage(before);
      out.ms = (user + system) / 1000;
    });
  });
  return out;
}

const results = config.mode === "streams" ? await runStreams(config) : await runPollers(config);
setTimeout(() => process.stdout.write(`RESULT ${JSON.stringify(results())}\n`), Math.max(0, config.reportAtMs - now()));
process.once("SIGTERM", () => process.exit(0));
