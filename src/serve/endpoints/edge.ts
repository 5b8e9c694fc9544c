// GET /edge/key: a front's question "may this key be served?" (deploy/nginx, deploy/varnish), answered from the key
// ring, so that the front can serve one cached copy of a resource to every key and ask the server only about keys.
import type { IncomingMessage, ServerResponse } from "node:http";
import { ApiError } from "../../errors.ts";
import type { Credential } from "../admission/admission.ts";
import { sendProblem } from "../bodies/respond.ts";
import { DEFAULT_EDGE_KEY_TTL } from "../../config/defaults.ts";
import type { ResponderModule } from "../responder.ts";

/** `public, max-age=<s>` by seconds, made once each (header values are checked on every response). */
const CACHE_CONTROL: string[] = [];
const cacheControl = (s: number) => (CACHE_CONTROL[s] ??= `public, max-age=${s}`);

/**
 * Answers a key check; returns [status, bytes]. A valid key: 204 with `X-Key-Name`, `X-Key-Rate` (requests a
 * second) and `X-Key-Burst` (the bucket's size), fresh for `ttl` seconds, or less when the key is a replaced one whose
 * grace period ends sooner. A key refused as such (missing, malformed, unknown, revoked, given twice, past its
 * grace): the API's own 401, fresh for `ttl` too, since it is the same for every client. The lockout of an address
 * (too many failed keys from it) is that address's alone: `no-store`, like every other error.
 */
function sendKeyCheck(
  req: IncomingMessage,
  res: ServerResponse,
  verdict: Credential | ApiError,
  nowMs: number,
  ttl: number,
): [number, number] {
  if (verdict instanceof ApiError)
    return sendProblem(req, res, verdict, [], null, verdict.reason === "address_locked_out" ? null : ttl);
  const fresh = Math.max(0, Math.min(ttl, Math.floor((verdict.until - nowMs) / 1000)));
  res.writeHead(204, [
    "Cache-Control",
    cacheControl(fresh),
    "X-Key-Name",
    verdict.name,
    "X-Key-Rate",
    String(verdict.limit.rate),
    "X-Key-Burst",
    String(verdict.limit.burst),
  ]);
  res.end();
  return [204, 0];
}

/** GET /edge/key's responder: the query's key checked, the answer fresh for EDGE_KEY_TTL. */
export const responder: ResponderModule["responder"] = ({ options }) => {
  const ttl = options.edgeKeyTtl ?? DEFAULT_EDGE_KEY_TTL;
  return (req, res, s, _a, info, _headers, nowMs) =>
    sendKeyCheck(req, res, s.gate.checkKey(req, info.query!, nowMs), nowMs, ttl);
};
