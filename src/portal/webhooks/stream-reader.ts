// The portal's reading of the API's own event stream (GET /v1/events, docs/events.md) with a key of its own: every
// event, without affid (payload.ts splices each endpoint's), recorded with its deliveries and the stream's position in
// one transaction (queue.ts), and read again after a restart or a dropped connection from that position
// (Last-Event-ID), so that no event is lost between the stream and the queue.
import { request as httpRequest } from "node:http";
import type { ClientRequest, IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import type { PortalDatabase } from "../../db/database.ts";
import { errorLine } from "../../errors.ts";
import { readCursor, recordEvents } from "./queue.ts";
import type { StreamEvent } from "./queue.ts";

/** The cursor's name in webhook_cursor. */
const CURSOR = "events";
/** The wait before connecting again, ms: the stream's own `retry` (2 s), doubled while it fails, up to 30 s. */
const FIRST_RETRY_MS = 2_000;
const MAX_RETRY_MS = 30_000;

export interface StreamReaderOptions {
  db: PortalDatabase;
  /** The API's base URL (the portal's apiUrl). */
  apiUrl: string;
  /** The portal's own API key (WEBHOOKS_API_KEY). */
  apiKey: string;
  clock: () => number;
  log: (line: string) => void;
  /** Called once deliveries were queued. */
  queued: () => void;
}

export interface StreamReader {
  /** Events recorded since the start. */
  readonly recorded: number;
  /** Whether the stream is open now. */
  readonly open: boolean;
  close(): Promise<void>;
}

/** Splits the stream's text into events (WHATWG rules for the fields used), keeping an unfinished one for later. */
function createParser() {
  let buffer = "";
  let current: Partial<StreamEvent> = {};
  return (chunk: string): StreamEvent[] => {
    buffer += chunk;
    const out: StreamEvent[] = [];
    let nl: number;
    while ((nl = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, nl).replace(/\r$/, "");
      buffer = buffer.slice(nl + 1);
      if (line === "") {
        if (current.id && current.type?.startsWith("sale.") && current.data !== undefined)
          out.push({ id: current.id, type: current.type, data: current.data });
        current = {};
        continue;
      }
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "data") current.data = current.data === undefined ? value : `${current.data}\n${value}`;
      else if (field === "id") current.id = value;
      else if (field === "event") current.type = value;
    }
    return out;
  };
}

/** Starts reading the stream (from the position recorded, if any); reconnects until closed. */
export function startStreamReader(options: StreamReaderOptions): StreamReader {
  const { db, clock } = options;
  let stopped = false;
  let open = false;
  let recorded = 0;
  let req: ClientRequest | null = null;
  let retryMs = FIRST_RETRY_MS;
  let timer: NodeJS.Timeout | undefined;
  let work: Promise<unknown> = Promise.resolve();
  const logError = (event: string, err: unknown) =>
    options.log(JSON.stringify(errorLine("warn", event, err, { at: clock() })));

  const again = () => {
    open = false;
    req = null;
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(() => void connect(), retryMs).unref();
    retryMs = Math.min(retryMs * 2, MAX_RETRY_MS);
  };

  /** Records the events of one chunk (the response paused meanwhile). */
  const take = (res: IncomingMessage, events: StreamEvent[]) => {
    if (events.length === 0) return;
    res.pause();
    work = work
      .then(async () => {
        const queued = await recordEvents(db, CURSOR, events, clock());
        recorded += events.length;
        if (queued) options.queued();
        res.resume();
      })
      .catch((err: unknown) => {
        logError("webhook_stream_record_failed", err);
        res.destroy(); // read again from the last position recorded
      });
  };

  async function connect(): Promise<void> {
    if (stopped) return;
    const last = await readCursor(db, CURSOR).catch(() => null);
    const url = new URL("/v1/events", options.apiUrl);
    url.searchParams.set("apikey", options.apiKey);
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    const headers: Record<string, string> = { accept: "text/event-stream" };
    if (last) headers["last-event-id"] = last;
    req = send(url, { headers }, (res) => {
      if (res.statusCode !== 200) {
        logError("webhook_stream_refused", new Error(`GET /v1/events answered ${res.statusCode}`));
        res.resume();
        return again();
      }
      open = true;
      retryMs = FIRST_RETRY_MS;
      const parse = createParser();
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => take(res, parse(chunk)));
      res.on("close", again);
    });
    req.on("error", (err) => {
      logError("webhook_stream_failed", err);
      if (!open) again();
    });
    req.end();
  }

  void connect();
  return {
    get recorded() {
      return recorded;
    },
    get open() {
      return open;
    },
    async close() {
      stopped = true;
      clearTimeout(timer);
      req?.destroy();
      await work;
    },
  };
}
