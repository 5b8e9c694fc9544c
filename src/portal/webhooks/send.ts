// One attempt at a delivery: a POST of the signed body to the endpoint's URL, through the address guard (the name is
// resolved and checked where a connection is made; an address in the URL is checked itself), within a timeout,
// redirects not followed (a 3xx is a failure), and at most ANSWER_BYTES of the answer read. Connections are kept
// alive between deliveries to one origin (host and port) by the sender's agents: a connection is reused only after an
// answer read to its end within ANSWER_BYTES, a new one is made through the guard's lookup, and an idle one is closed
// after IDLE_MS (or at once beyond IDLE_SOCKETS idle). A request on a reused connection that the receiver closed before
// any byte of its answer (ECONNRESET, EPIPE) is sent once more at once on a new connection.
import { Agent as HttpAgent, request as httpRequest } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import type { ClientRequest, IncomingMessage } from "node:http";
import { isIP } from "node:net";
import type { Socket } from "node:net";
import type { AddressGuard } from "./address-guard.ts";
import { boundedMemo } from "../../bounded-memo.ts";

/** How much of an answer is read (and kept in the attempts' log), bytes. */
const ANSWER_BYTES = 1024;
/** How long a connection is kept idle for the next delivery to its origin, ms (less if the receiver says less). */
const IDLE_MS = 2_000;
/** The most connections an agent keeps idle, over every origin: beyond, a connection is closed once its answer is read. */
const IDLE_SOCKETS = 64;

/** The sender's connection pools: one agent for http, one for https, each keeping connections by origin. */
export interface SendAgents {
  http: HttpAgent;
  https: HttpsAgent;
  /** Closes every connection, idle or not. */
  close(): void;
}

/** Keep-alive agents whose idle connections are bounded in number (IDLE_SOCKETS) and time (IDLE_MS). */
export function createSendAgents(): SendAgents {
  const bounded = <A extends HttpAgent>(agent: A): A => {
    const keep = agent.keepSocketAlive.bind(agent);
    agent.keepSocketAlive = (socket: Socket) => {
      let idle = 0;
      for (const free of Object.values(agent.freeSockets)) idle += free?.length ?? 0;
      return idle < IDLE_SOCKETS && keep(socket);
    };
    return agent;
  };
  const settings = { keepAlive: true, timeout: IDLE_MS, scheduling: "lifo" } as const;
  const agents = { http: bounded(new HttpAgent(settings)), https: bounded(new HttpsAgent(settings)) };
  return {
    ...agents,
    close() {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}

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
  agents?: SendAgents | undefined;
}

/** A 2xx status: delivered. */
export const delivered = (r: AttemptResult) => r.status >= 200 && r.status < 300;

/** Endpoints' URLs parsed (the last URLS_KEPT): a URL's parts are the same at each delivery. */
const URLS_KEPT = 4096;

/**
 * `url` parsed: the URL, whether it is plain http, and the address it names if it names one (checked by the guard at
 * each attempt); or why it is not sent to.
 */
const parseTarget = boundedMemo(URLS_KEPT, (url): { target: URL; plain: boolean; address: string | null } | string => {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return "not a URL";
  }
  const plain = target.protocol === "http:";
  if (!plain && target.protocol !== "https:") return "only https and http URLs are sent to";
  const host = target.hostname.replace(/^\[(.*)\]$/, "$1");
  return { target, plain, address: isIP(host) ? host : null };
});

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
  const parsed = parseTarget(url);
  if (typeof parsed === "string") return Promise.resolve(result(0, parsed));
  const { target, plain, address } = parsed;
  if (address) {
    const refused = options.guard.refusal(address, plain);
    if (refused) return Promise.resolve(result(0, `refused: ${refused}`));
  }
  return new Promise((resolve) => {
    const send = plain ? httpRequest : httpsRequest;
    let req: ClientRequest;
    let settled = false;
    const timer = setTimeout(
      () => req.destroy(new Error(`no answer within ${options.timeoutMs} ms`)),
      options.timeoutMs,
    );
    const done = (r: AttemptResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(r);
    };
    /** Sends on a kept-alive connection (or a new one), or with `fresh` on a new connection of its own. */
    const post = (fresh: boolean) => {
      /** The connection and its bytes read before this request: more by the error, and something of an answer came. */
      let connection: { socket: Socket; readBefore: number } | undefined;
      req = send(target, {
        method: "POST",
        headers: {
          ...headers,
          "content-type": "application/json",
          "content-length": String(body.length),
          "user-agent": "flash-sale-webhooks/1",
        },
        // A new connection (the agent's, or this request's own) is made through the guard's lookup; one the agent
        // reuses was checked when it was made.
        lookup: options.guard.lookup(plain),
        agent: options.agents && !fresh ? (plain ? options.agents.http : options.agents.https) : false,
        ...(options.ca ? { ca: options.ca } : {}),
      });
      const sent = req;
      sent.on("socket", (socket: Socket) => (connection = { socket, readBefore: socket.bytesRead }));
      sent.on("error", (err: NodeJS.ErrnoException) => {
        // A kept-alive connection the receiver closed as this request went out (its idle timeout): nothing of the
        // answer came, so the request is sent once more at once on a new connection (at least once: it may have been
        // processed) rather than failing the attempt and waiting 5 s for the retry.
        const unanswered = connection !== undefined && connection.socket.bytesRead === connection.readBefore;
        if (sent.reusedSocket && unanswered && STALE.has(err.code ?? "") && !settled) {
          post(true);
          return;
        }
        done(result(0, err.message.startsWith("refused") ? err.message : `error: ${err.message}`));
      });
      sent.on("response", (res: IncomingMessage) => {
        readAnswer(res, (text) => done(result(res.statusCode ?? 0, text)));
      });
      sent.end(body);
    };
    post(false);
  });
}

/** Errors of a connection closed under a request (a closed socket without an answer is node's ECONNRESET too). */
const STALE = new Set(["ECONNRESET", "EPIPE"]);

/**
 * Reads up to ANSWER_BYTES of the answer. An answer that ended within them leaves its connection to the agent (kept
 * alive for the next delivery to the origin); a longer one is read no further: its connection is closed.
 */
function readAnswer(res: IncomingMessage, done: (text: string) => void): void {
  const parts: Buffer[] = [];
  let length = 0;
  let finished = false;
  const finish = (whole: boolean) => {
    if (finished) return;
    finished = true;
    done(Buffer.concat(parts).subarray(0, ANSWER_BYTES).toString("utf8"));
    if (!whole) res.destroy();
  };
  res.on("data", (chunk: Buffer) => {
    parts.push(chunk);
    length += chunk.length;
    if (length >= ANSWER_BYTES) finish(false);
  });
  res.on("end", () => finish(true));
  res.on("close", () => finish(false));
  res.on("error", () => finish(false));
}
