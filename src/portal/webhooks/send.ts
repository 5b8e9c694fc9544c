// One attempt at a delivery: a POST of the signed body to the endpoint's URL, through the address guard (the name is
// resolved and checked where the connection is made; an address in the URL is checked itself), within a timeout,
// redirects not followed (a 3xx is a failure), and at most ANSWER_BYTES of the answer read.
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import type { IncomingMessage } from "node:http";
import { isIP } from "node:net";
import type { AddressGuard } from "./address-guard.ts";

/** How much of an answer is read (and kept in the attempts' log), bytes. */
const ANSWER_BYTES = 1024;

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
}

/** A 2xx status: delivered. */
export const delivered = (r: AttemptResult) => r.status >= 200 && r.status < 300;

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
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return Promise.resolve(result(0, "not a URL"));
  }
  const plain = target.protocol === "http:";
  if (!plain && target.protocol !== "https:") return Promise.resolve(result(0, "only https and http URLs are sent to"));
  const host = target.hostname.replace(/^\[(.*)\]$/, "$1");
  if (isIP(host)) {
    const refused = options.guard.refusal(host, plain);
    if (refused) return Promise.resolve(result(0, `refused: ${refused}`));
  }
  return new Promise((resolve) => {
    const send = plain ? httpRequest : httpsRequest;
    const req = send(target, {
      method: "POST",
      headers: {
        ...headers,
        "content-type": "application/json",
        "content-length": String(body.length),
        "user-agent": "flash-sale-webhooks/1",
      },
      lookup: options.guard.lookup(plain),
      agent: false,
      ...(options.ca ? { ca: options.ca } : {}),
    });
    const timer = setTimeout(
      () => req.destroy(new Error(`no answer within ${options.timeoutMs} ms`)),
      options.timeoutMs,
    );
    const done = (r: AttemptResult) => {
      clearTimeout(timer);
      resolve(r);
    };
    req.on("error", (err) =>
      done(result(0, err.message.startsWith("refused") ? err.message : `error: ${err.message}`)),
    );
    req.on("response", (res: IncomingMessage) => readAnswer(res, (text) => done(result(res.statusCode ?? 0, text))));
    req.end(body);
  });
}

/** Reads up to ANSWER_BYTES of the answer, then ends the connection. */
function readAnswer(res: IncomingMessage, done: (text: string) => void): void {
  const parts: Buffer[] = [];
  let length = 0;
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    done(Buffer.concat(parts).subarray(0, ANSWER_BYTES).toString("utf8"));
    res.destroy();
  };
  res.on("data", (chunk: Buffer) => {
    parts.push(chunk);
    length += chunk.length;
    if (length >= ANSWER_BYTES) finish();
  });
  res.on("end", finish);
  res.on("close", finish);
  res.on("error", finish);
}
