// One attempt at a delivery: a POST of the signed body to the endpoint's URL, through the address guard (the name is
// resolved and checked where a connection is made; an address in the URL is checked itself), within a timeout,
// redirects not followed (a 3xx is a failure), and at most ANSWER_BYTES of the answer read. The request is written
// as HTTP/1.1 in one write on a connection of the sender's pool (connections.ts) and its answer read by
// answer-reader.ts: a connection is reused only after an answer read to its end within ANSWER_BYTES, a new one is
// made through the guard's lookup, and an idle one is closed after IDLE_MS (or at once beyond IDLE_SOCKETS idle). A
// request on a reused connection that the receiver closed before any byte of its answer (ECONNRESET, EPIPE, or a
// close) is sent once more at once on a new connection. Once an answer's head has come, its status stands: a body
// cut short or past the timeout only ends the answer's text.
import { isIP } from "node:net";
import type { AddressGuard } from "./address-guard.ts";
import { AnswerReader } from "./answer-reader.ts";
import { createSendPool } from "./connections.ts";
import type { Connection, Origin, SendPool } from "./connections.ts";
import { boundedMemo } from "../../bounded-memo.ts";

/** What an attempt came to: the status (0: no answer), how long it took, the answer's first bytes or the error. */
export interface AttemptResult {
  status: number;
  latencyMs: number;
  answer: string;
}

/** One request's settings. */
export interface SendOptions {
  guard: AddressGuard;
  /** The whole attempt's limit, ms: connection, request and answer. */
  timeoutMs: number;
  /** Extra certificate authorities to trust (tests' own receivers); default the system's. */
  ca?: string | undefined;
  /** The connections kept alive between attempts; none: a connection of its own for this attempt. */
  pool?: SendPool | undefined;
}

/** A 2xx status: delivered. */
export const delivered = (r: AttemptResult) => r.status >= 200 && r.status < 300;

/** Endpoints' URLs parsed (the last URLS_KEPT): a URL's parts are the same at each delivery. */
const URLS_KEPT = 4096;

/** A URL's parts: where it connects, the address it names if it names one (checked at each attempt), its head. */
interface Target {
  origin: Origin;
  address: string | null;
  /** The request line and Host header. */
  start: string;
}

/** `url` parsed, or why it is not sent to. */
const parseTarget = boundedMemo(URLS_KEPT, (url): Target | string => {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return "not a URL";
  }
  const plain = target.protocol === "http:";
  if (!plain && target.protocol !== "https:") return "only https and http URLs are sent to";
  const host = target.hostname.replace(/^\[(.*)\]$/, "$1");
  const port = target.port === "" ? (plain ? 80 : 443) : Number(target.port);
  return {
    origin: { plain, host, port, key: `${target.protocol}//${target.host}` },
    address: isIP(host) ? host : null,
    start: `POST ${target.pathname}${target.search} HTTP/1.1\r\nhost: ${target.host}\r\n`,
  };
});

/** What node's http client accepts in a header's name and value (RFC 9110's token; field-content without CR LF). */
const NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const BAD_VALUE = /[^\t\x20-\x7e\x80-\xff]/;

/** The request's head, or why a header cannot be sent. */
function requestHead(start: string, headers: Record<string, string>, length: number, keep: boolean): string | null {
  let head = start;
  for (const name in headers) {
    const value = headers[name]!;
    if (!NAME.test(name) || BAD_VALUE.test(value)) return null;
    head += `${name}: ${value}\r\n`;
  }
  return (
    head +
    `content-type: application/json\r\ncontent-length: ${length}\r\nuser-agent: flash-sale-webhooks/1\r\n` +
    `connection: ${keep ? "keep-alive" : "close"}\r\n\r\n`
  );
}

/** Errors of a connection closed under a request (a close without an error is one too). */
const STALE = new Set(["ECONNRESET", "EPIPE"]);

/**
 * The request's bytes and where they go, or why it is not sent (an address in the URL is checked here); `keep`: on a
 * kept-alive connection. Connects to nothing.
 */
export function prepareRequest(
  url: string,
  headers: Record<string, string>,
  body: Buffer,
  guard: AddressGuard,
  keep: boolean,
): { target: Target; request: Buffer } | string {
  const target = parseTarget(url);
  if (typeof target === "string") return target;
  if (target.address) {
    const refused = guard.refusal(target.address, target.origin.plain);
    if (refused) return `refused: ${refused}`;
  }
  const head = requestHead(target.start, headers, body.length, keep);
  if (head === null) return "error: a header holds a character HTTP does not allow";
  return { target, request: Buffer.concat([Buffer.from(head, "latin1"), body]) };
}

/** POSTs `body` to `url` with `headers`; never throws (a refusal or error is a result with status 0). */
export function sendWebhook(
  url: string,
  headers: Record<string, string>,
  body: Buffer,
  options: SendOptions,
): Promise<AttemptResult> {
  const started = performance.now();
  const result = (status: number, answer: string): AttemptResult => ({
    status,
    latencyMs: Math.round(performance.now() - started),
    answer,
  });
  const prepared = prepareRequest(url, headers, body, options.guard, options.pool !== undefined);
  if (typeof prepared === "string") return Promise.resolve(result(0, prepared));
  const { target, request } = prepared;
  const pool = options.pool ?? createSendPool();
  return new Promise((resolve) => {
    let settled = false;
    let connection: Connection | undefined;
    let reader: AnswerReader | undefined;
    /** Ends the attempt; `keep`: the connection goes back to the pool (else it is closed). */
    const done = (r: AttemptResult, keep: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (connection && keep) pool.give(connection, reader!.keepAliveMs);
      else if (connection) {
        connection.user = null;
        connection.socket.destroy();
      }
      if (!options.pool) pool.close();
      resolve(r);
    };
    /** The answer so far: its status and first bytes when its head came, else `why`. */
    const answered = (why: string) =>
      reader && reader.status > 0
        ? result(reader.status, reader.answer)
        : result(0, why.startsWith("refused") ? why : `error: ${why}`);
    const timer = setTimeout(
      () => done(answered(`no answer within ${options.timeoutMs} ms`), false),
      options.timeoutMs,
    );
    /** Sends on a kept-alive connection (or a new one), or with `fresh` on a new one. */
    const post = (fresh: boolean) => {
      let c: Connection;
      try {
        c = connection = pool.take(target.origin, options.guard, options.ca, fresh);
      } catch (err) {
        return done(answered((err as Error).message), false); // a connection node would not start: a failed attempt
      }
      const read = (reader = new AnswerReader());
      c.user = {
        data(chunk) {
          read.push(chunk);
          if (read.done) done(answered(read.error ?? "no answer"), read.error === null && read.reusable);
        },
        closed(err) {
          read.end();
          // A kept-alive connection the receiver closed as this request went out (its idle timeout): nothing of the
          // answer came, so the request is sent once more at once on a new connection (at least once: it may have
          // been processed) rather than failing the attempt and waiting 5 s for the retry.
          if (c.reused && !read.started && (err === null || STALE.has(err.code ?? "")) && !settled) return post(true);
          done(answered(read.status > 0 ? "" : (err?.message ?? read.error ?? "socket hang up")), false);
        },
      };
      c.socket.write(request);
    };
    post(false);
  });
}
