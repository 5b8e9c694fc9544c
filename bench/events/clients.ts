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
const now = () => performance.timeOrigin + performance.now();
/** Streams being opened at once. */
const OPENING = 200;

const config = JSON.parse(readFileSync(process.argv[2]!, "utf8")) as ClientsConfig;
// The streams' clients yield their shared core to the polling clients: reading 10,000 heartbeats or events at once,
// they would otherwise add their own time to the pollers' latency.
if (config.mode === "streams") setPriority(10);

/** Where every stream's bytes are read into (each read is handled before the next one is made). */
const READ_BUFFER = Buffer.allocUnsafe(64 * 1024);

/**
 * Opens one stream; resolves once its head and first comment have come. Its reads bypass node's stream machinery
 * (`onread`): with 10,000 streams on one core, what the clients spend on each read is part of the delay measured.
 */
function openStream(key: string, out: StreamResult & { frame?: string }): Promise<Socket> {
  const marker = Buffer.from(`"sale_key":"${config.saleKey}"`);
  return new Promise((resolve, reject) => {
    let head = "";
    let open = false;
    /** A frame's beginning, when a read ended inside it (a copy: the read buffer is reused). */
    let partial: Buffer | null = null;
    const onRead = (n: number, buf: Buffer): boolean => {
      const at = now();
      const chunk = buf.subarray(0, n);
      if (!open) {
        head += chunk.toString("latin1");
        const end = head.indexOf("\r\n\r\n");
        if (end < 0) return true;
        if (!head.startsWith("HTTP/1.1 200")) reject(new Error(`stream: ${head.slice(0, 300)}`));
        else if (head.includes("retry:", end)) {
          open = true;
          resolve(socket);
        }
        return true;
      }
      if (out.frame !== undefined && !out.frame.includes("}\n\n")) out.frame += chunk.toString("latin1");
      const text = partial ? Buffer.concat([partial, chunk]) : chunk;
      // A marker wholly in the partial frame was counted with the read before.
      const counted = partial ? partial.length - marker.length : -1;
      for (let i = text.indexOf(marker); i >= 0; i = text.indexOf(marker, i + marker.length)) {
        if (i <= counted) continue;
        out.times++;
        if (out.receivedMs === null) {
          out.receivedMs = at;
          out.frame = text.toString("latin1");
        }
      }
      // Reads end where a frame and its chunk do (`\n\n\r\n`), but for a frame split between two.
      const l = text.length;
      const whole = l >= 4 && text[l - 4] === 10 && text[l - 3] === 10 && text[l - 2] === 13 && text[l - 1] === 10;
      partial = whole ? null : Buffer.from(text);
      return true;
    };
    const socket = connect({ port: config.port, host: config.host, onread: { buffer: READ_BUFFER, callback: onRead } });
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

/** The frame's `id` and `sent`, read from the bytes around the marker once the measured second is over. */
function parseFrame(out: StreamResult & { frame?: string }): StreamResult {
  const m = out.frame === undefined ? null : /id: (\S+)\nevent: sale\.begins\ndata: .*"sent":"([^"]+)"/.exec(out.frame);
  const { frame: _, ...result } = out;
  return m ? { ...result, id: m[1]!, sentMs: Date.parse(m[2]!) } : result;
}

async function runStreams(c: Extract<ClientsConfig, { mode: "streams" }>): Promise<() => unknown> {
  const results: (StreamResult & { frame?: string })[] = Array.from({ length: c.count }, () => ({
    receivedMs: null,
    id: null,
    sentMs: null,
    times: 0,
    ended: false,
  }));
  let next = 0;
  const opener = async () => {
    for (let i = next++; i < c.count; i = next++) await openStream(c.keys[Math.floor(i / c.perKey)]!, results[i]!);
  };
  await Promise.all(Array.from({ length: OPENING }, opener));
  // This process's CPU time in the second from the instant: mostly reading the event on every stream.
  let cpuMs: number | null = null;
  setTimeout(
    () => {
      const before = process.cpuUsage();
      setTimeout(
        () => {
          const { user, system } = process.cpuUsage(before);
          cpuMs = (user + system) / 1000;
        },
        config.instantMs + 1000 - now(),
      );
    },
    config.instantMs - 200 - now(),
  );
  process.stdout.write(`READY ${c.count}\n`);
  return (): StreamsResult => ({ streams: results.map(parseFrame), cpuMs });
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
  return () => pollers.map((p) => p.result);
}

const results = config.mode === "streams" ? await runStreams(config) : await runPollers(config);
setTimeout(() => process.stdout.write(`RESULT ${JSON.stringify(results())}\n`), Math.max(0, config.reportAtMs - now()));
process.once("SIGTERM", () => process.exit(0));
