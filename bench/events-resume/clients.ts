// The events-resume benchmark's clients, in a process of their own (pinned to the other core than the server's): a
// storm of event streams that all reconnect at once with one Last-Event-ID, a single reference stream, or polling
// clients that ask for the active list once a second each.
// Usage: node --import tsx bench/events-resume/clients.ts <config.json>
// Streams: prints `READY <n>` and starts connecting at once; once every stream has received `targetId` (the last event
// it missed), or has failed, or `timeoutMs` has passed, prints `RESULT <json>` and keeps its connections open until
// SIGTERM (so that closing them is not measured). Pollers: `READY <n>` once each has had an answer, `RESULT <json>`
// on SIGUSR2.
import { readFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { connect } from "node:net";
import { setPriority } from "node:os";
import { loopbackSource } from "../lib/loopback-source.ts";

/** What the benchmark hands the process. */
export type ResumeClientsConfig = { host: string; port: number } & (
  | {
      mode: "streams";
      /** The keys to spread the streams over, `perKey` each. */
      keys: string[];
      perKey: number;
      count: number;
      /** The Last-Event-ID every stream sends, and the ID of the last event it missed. */
      lastId: string;
      targetId: string;
      /** Connections being opened at a time (the rest wait for one to open). */
      opening: number;
      timeoutMs: number;
      /** What the reference stream got up to `targetId`: its count and its IDs' hash; null to keep the IDs instead. */
      reference: { count: number; hash: number } | null;
    }
  | { mode: "pollers"; key: string; path: string; count: number }
);

/** A storm's results: per stream, in the order opened. */
export interface StreamsResult {
  /** Epoch ms the first connection was started. */
  startedMs: number;
  /** Per stream: ms from `startedMs` to the read that brought `targetId` (null: never came). */
  doneMs: (number | null)[];
  /** Per stream: ms from `startedMs` to its closing, if it closed before `targetId` came (null: it did not). */
  endedMs: (number | null)[];
  /** Per stream: bytes read (the response head included) until then, or until the result if it never came. */
  bytes: number[];
  /** Per stream: events up to and including `targetId`, their IDs' hash, and the events after it (live ones). */
  count: number[];
  hash: number[];
  after: number[];
  /** Streams whose IDs were not strictly increasing (in the order of schedule.ts's compareEvents). */
  disordered: number;
  /** Streams closed by the server before the result; answers that were not a 200, and the first few's status lines. */
  ended: number;
  refusedCount: number;
  refused: string[];
  /** The IDs one stream got up to `targetId` (only when no reference was given). */
  ids: string[] | null;
  /** This process's CPU time from the first connection to the result, ms. */
  cpuMs: number;
}

/** The polling clients' answers: epoch ms each was complete, its latency (ms) and status; and errors (first few). */
export interface PollersResult {
  answers: [number, number, number][];
  skipped: number;
  errors: string[];
}

const ORIGIN = performance.timeOrigin;
const now = () => ORIGIN + performance.now();
const ID_LINE = Buffer.from("\nid: ");
/** Where every stream's bytes are read into (each read is handled before the next one is made). */
const READ_BUFFER = Buffer.allocUnsafe(64 * 1024);

/** FNV-1a over `s`, continuing from `h`: one number stands for a stream's sequence of IDs. */
function fnv(h: number, s: string): number {
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619) >>> 0;
  return Math.imul(h ^ 10, 16777619) >>> 0;
}

/** Whether event ID `b` comes after `a` in a stream (`<pos>.<rank>.<hash>`: by pos, rank, then the ID itself). */
function follows(a: string, b: string): boolean {
  const [pa, ra] = a.split(".", 2).map(Number) as [number, number];
  const [pb, rb] = b.split(".", 2).map(Number) as [number, number];
  return pb > pa || (pb === pa && (rb > ra || (rb === ra && b > a)));
}

/** One stream's state: where its bytes stand (head, a partial `id:` line) and what its IDs were. */
interface Tracked {
  open: boolean;
  head: string;
  /** An `id:` line (or the start of one) cut by the end of the last read, from its "\n" on. */
  partial: string;
  last: string | null;
  count: number;
  hash: number;
  after: number;
  doneAt: number | null;
  endedAt: number | null;
  finished: boolean;
  bytes: number;
  disordered: boolean;
  ended: boolean;
  ids: string[] | null;
}

function runStreams(c: Extract<ResumeClientsConfig, { mode: "streams" }>): void {
  // The streams' clients yield their shared core to the pollers, as bench/events/clients.ts's do.
  setPriority(10);
  const streams: Tracked[] = [];
  const refused: string[] = [];
  let finished = 0;
  let reported = false;
  const startedMs = now();
  const cpuAtStart = process.cpuUsage();

  const report = () => {
    if (reported) return;
    reported = true;
    const cpu = process.cpuUsage(cpuAtStart);
    const result: StreamsResult = {
      startedMs,
      doneMs: streams.map((s) => (s.doneAt === null ? null : s.doneAt - startedMs)),
      endedMs: streams.map((s) => (s.endedAt === null ? null : s.endedAt - startedMs)),
      bytes: streams.map((s) => s.bytes),
      count: streams.map((s) => s.count),
      hash: streams.map((s) => s.hash),
      after: streams.map((s) => s.after),
      disordered: streams.filter((s) => s.disordered).length,
      ended: streams.filter((s) => s.ended).length,
      refusedCount: refused.length,
      refused: refused.slice(0, 3),
      ids: streams[0]?.ids ?? null,
      cpuMs: (cpu.user + cpu.system) / 1000,
    };
    process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
  };
  /** A stream is finished once it has its last missed event, or has closed without it. */
  const finish = (s: Tracked) => {
    if (s.finished) return;
    s.finished = true;
    if (++finished === c.count) report();
  };
  setTimeout(report, c.timeoutMs).unref();

  const onId = (s: Tracked, id: string, at: number) => {
    if (s.last !== null && !follows(s.last, id)) s.disordered = true;
    s.last = id;
    if (s.doneAt !== null) {
      s.after++;
      return;
    }
    s.count++;
    s.hash = fnv(s.hash, id);
    s.ids?.push(id);
    if (id === c.targetId) {
      s.doneAt = at;
      finish(s);
    }
  };

  /** Finds the `id:` lines of a read (one may be cut at either end: `partial` carries it over). */
  const scan = (s: Tracked, buf: Buffer, n: number, at: number) => {
    let from = 0;
    if (s.partial) {
      const nl = buf.indexOf(10);
      const upTo = nl < 0 || nl >= n ? n : nl;
      const line = s.partial + buf.toString("latin1", 0, upTo);
      if (upTo === n && line.length < 64) {
        s.partial = line;
        return;
      }
      s.partial = "";
      if (line.startsWith("\nid: ") && upTo < n) onId(s, line.slice(5), at);
      from = upTo;
    }
    for (;;) {
      const i = buf.indexOf(ID_LINE, from);
      if (i < 0 || i >= n) break;
      const nl = buf.indexOf(10, i + 1);
      if (nl < 0 || nl >= n) {
        s.partial = buf.toString("latin1", i, n);
        return;
      }
      onId(s, buf.toString("latin1", i + 5, nl), at);
      from = nl;
    }
    // The read may end in the first bytes of "\nid: ".
    for (let k = Math.min(ID_LINE.length - 1, n - from); k > 0; k--)
      if (buf.compare(ID_LINE, 0, k, n - k, n) === 0) {
        s.partial = buf.toString("latin1", n - k, n);
        return;
      }
  };

  const open = (i: number, opened: () => void) => {
    const s: Tracked = {
      open: false,
      head: "",
      partial: "",
      last: null,
      count: 0,
      hash: 2166136261,
      after: 0,
      doneAt: null,
      endedAt: null,
      finished: false,
      bytes: 0,
      disordered: false,
      ended: false,
      ids: c.reference === null && i === 0 ? [] : null,
    };
    streams[i] = s;
    const onRead = (n: number, buf: Buffer): boolean => {
      const at = now();
      if (s.doneAt === null) s.bytes += n;
      if (s.open) {
        scan(s, buf, n, at);
        return true;
      }
      s.head += buf.toString("latin1", 0, n);
      const end = s.head.indexOf("\r\n\r\n");
      if (end < 0) return true;
      opened();
      if (!s.head.startsWith("HTTP/1.1 200")) {
        refused.push(s.head.slice(0, s.head.indexOf("\r\n")));
        socket.destroy();
        return true;
      }
      s.open = true;
      // What came with the head: the stream's first comment, and perhaps its first events ("\r\n" ends the head).
      const rest = Buffer.from(s.head.slice(end + 2), "latin1");
      s.head = "";
      scan(s, rest, rest.length, at);
      return true;
    };
    const key = c.keys[Math.floor(i / c.perKey)]!;
    const socket = connect({
      port: c.port,
      host: c.host,
      localAddress: loopbackSource(key),
      onread: { buffer: READ_BUFFER, callback: onRead },
    });
    socket.setNoDelay(true);
    socket.on("error", () => undefined); // its 'close' follows
    socket.on("close", () => {
      if (!s.open) opened();
      s.ended = true;
      if (!s.finished) s.endedAt = now();
      finish(s);
    });
    socket.write(
      `GET /v1/events?apikey=${key} HTTP/1.1\r\nHost: ${c.host}:${c.port}\r\nAccept: text/event-stream\r\n` +
        `Last-Event-ID: ${c.lastId}\r\n\r\n`,
    );
  };

  let next = 0;
  const more = () => {
    if (next < c.count) open(next++, more);
  };
  for (let k = 0; k < Math.min(c.opening, c.count); k++) more();
  process.stdout.write(`READY ${c.count}\n`);
}

async function runPollers(c: Extract<ResumeClientsConfig, { mode: "pollers" }>): Promise<void> {
  const url = `/${c.path.replace(/^\//, "")}?apikey=${c.key}`;
  const result: PollersResult = { answers: [], skipped: 0, errors: [] };
  const pollers = Array.from({ length: c.count }, () => ({
    agent: new Agent({ keepAlive: true, maxSockets: 1 }),
    etag: null as string | null,
    busy: false,
  }));
  const poll = (p: (typeof pollers)[number], keep: boolean) =>
    new Promise<void>((resolve) => {
      if (p.busy) {
        result.skipped++;
        return resolve();
      }
      p.busy = true;
      const started = now();
      const headers: Record<string, string> = { "Accept-Encoding": "br, gzip" };
      if (p.etag) headers["If-None-Match"] = p.etag;
      const req = request({ host: c.host, port: c.port, path: url, agent: p.agent, headers }, (res) => {
        res.resume();
        res.on("end", () => {
          const done = now();
          p.busy = false;
          if (keep) result.answers.push([done, done - started, res.statusCode ?? 0]);
          p.etag = res.headers.etag ?? p.etag;
          resolve();
        });
      });
      req.on("error", (err) => {
        p.busy = false;
        if (result.errors.length < 5) result.errors.push(err.message);
        resolve();
      });
      req.end();
    });
  // Every client's first answer (its connection, the list's ETag) before READY, and not measured.
  await Promise.all(pollers.map((p) => poll(p, false)));
  process.stdout.write(`READY ${c.count}\n`);
  const start = Math.ceil(now() / 1000) * 1000;
  pollers.forEach((p, i) => {
    const phase = (i * 1000) / c.count; // each its own point of the second, spread evenly
    let k = 0;
    const tick = () => {
      void poll(p, true);
      k++;
      setTimeout(tick, Math.max(0, start + phase + k * 1000 - now()));
    };
    setTimeout(tick, Math.max(0, start + phase - now()));
  });
  process.on("SIGUSR2", () => process.stdout.write(`RESULT ${JSON.stringify(result)}\n`));
}

const config = JSON.parse(readFileSync(process.argv[2]!, "utf8")) as ResumeClientsConfig;
if (config.mode === "streams") runStreams(config);
else await runPollers(config);
process.once("SIGTERM", () => process.exit(0));
