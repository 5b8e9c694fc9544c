// GET /v1/usage.json: the key's limit, what is left of its burst now, and its counts today and in the last hour (by
// endpoint as well), read from the usage store (src/usage/). Never cached: it is one key's, and changes with every request.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Admitted } from "../admission/admission.ts";
import type { Take } from "../admission/rate-limit.ts";
import { JS_TYPE, JSON_TYPE } from "../bodies/response-body.ts";
import { sendText } from "../bodies/respond.ts";
import type { SpanFigures, UsageFigures } from "../../usage/hand-over.ts";
import type { Counts } from "../../usage/store.ts";
import { requestsIn } from "../../usage/store.ts";
import type { ResponderModule } from "../responder.ts";

/** Where the handler reads a key's figures: null when usage is not counted (USAGE=0) or cannot be read. */
type FiguresOf = (key: string) => Promise<UsageFigures | null>;

/** An instant as RFC 3339 to the second, as the API writes times. */
const second = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

const counts = (c: Counts) => ({
  requests: requestsIn(c),
  ok: c.ok,
  not_modified: c.not_modified,
  client_error: c.client_error,
  limited: c.limited,
  server_error: c.server_error,
  bytes: c.bytes,
});

/** A span's figures: all together, then by endpoint (route class), busiest first. */
const span = (f: SpanFigures) => ({
  since: second(f.since),
  ...counts(f),
  endpoints: f.routes
    .map(([endpoint, c]) => ({ endpoint, ...counts(c) }))
    .sort((a, b) => b.requests - a.requests || (a.endpoint < b.endpoint ? -1 : 1)),
});

/** The Usage body (src/api/schemas.ts) of an admitted request's key. */
function usageBody(a: Admitted, burst: Take, figures: UsageFigures | null) {
  return {
    key: a.credential.name,
    limits: { rate: a.credential.limit.rate, burst: a.credential.limit.burst },
    burst: { remaining: burst.remaining, reset: burst.reset },
    usage: figures && { today: span(figures.today), last_hour: span(figures.lastHour) },
  };
}

/** Answers GET /v1/usage.json once the figures are read; resolves with [status, bytes] then. */
async function sendUsage(
  req: IncomingMessage,
  res: ServerResponse,
  a: Admitted,
  burst: Take,
  figuresOf: FiguresOf | null,
  headers: readonly string[],
): Promise<[number, number]> {
  const figures = figuresOf ? await figuresOf(a.credential.name) : null;
  const json = JSON.stringify(usageBody(a, burst, figures));
  return a.callback
    ? sendText(req, res, 200, JS_TYPE, `/**/${a.callback}(${json});`, headers)
    : sendText(req, res, 200, JSON_TYPE, json, headers);
}

/** GET /v1/usage.json's responder: sent once the figures are read from the usage store. */
export const responder: ResponderModule["responder"] = ({ options }) => {
  const figuresOf = options.usage?.figures ?? null;
  // A failure to read the figures is answered by the handler, as every responder's is.
  return (req, res, s, a, _info, headers, nowMs) =>
    sendUsage(req, res, a!, s.gate.burstOf(a!.credential, nowMs), figuresOf, headers);
};
