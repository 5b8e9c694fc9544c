// GET /edge/key: a front's question "may this key be served?" (deploy/nginx, deploy/varnish), answered from the key
// ring, so that the front can serve one cached copy of a resource to every key and ask the server only about keys.
// A front of EDGE_FRONTS that is in step with the server's pushes (src/edge/) may hold the answer for EDGE_KEY_HOLD.
import type { IncomingMessage, ServerResponse } from "node:http";
import { ApiError } from "../../errors.ts";
import { hashKey, KEY_RE } from "../../keys/keys-file.ts";
import type { Credential } from "../admission/admission.ts";
import { headerKeyOf, presentedKey } from "../admission/presented-key.ts";
import { sendProblem } from "../bodies/respond.ts";
import { DEFAULT_EDGE_KEY_HOLD, DEFAULT_EDGE_KEY_TTL } from "../../config/defaults.ts";
import type { HandlerOptions } from "../handler-types.ts";
import type { ResponderModule } from "../responder.ts";

/** `public, max-age=<s>` by seconds, made once each (header values are checked on every response). */
const CACHE_CONTROL = new Map<number, string>();
const cacheControl = (s: number) => {
  let value = CACHE_CONTROL.get(s);
  if (value === undefined) CACHE_CONTROL.set(s, (value = `public, max-age=${s}`));
  return value;
};
/** The refusals a front may hold for long: a key the keys file knows and refuses (the push says when that changes). */
const KNOWN_REFUSALS = new Set(["api_key_invalid", "api_key_suspended"]);

/**
 * Answers a key check; returns [status, bytes]. A valid key: 204 with `X-Key-Name`, `X-Key-Rate` (requests a
 * second) and `X-Key-Burst` (the bucket's size), fresh for `ttl` seconds, or less when the key is a replaced one whose
 * grace period ends sooner. A key refused as such (missing, malformed, unknown, revoked, given twice, past its
 * grace): the API's own 401, fresh for `ttl` too, since it is the same for every client. The lockout of an address
 * (too many failed keys from it) is that address's alone: `no-store`, like every other error. `hashHeader` is
 * `X-Key-Hash` and the key's hash, for a well-formed key (what Varnish bans by), or empty.
 */
function sendKeyCheck(
  req: IncomingMessage,
  res: ServerResponse,
  verdict: Credential | ApiError,
  nowMs: number,
  ttl: number,
  hashHeader: readonly string[],
): [number, number] {
  if (verdict instanceof ApiError)
    return sendProblem(req, res, verdict, hashHeader, null, verdict.reason === "address_locked_out" ? null : ttl);
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
    ...hashHeader,
  ]);
  res.end();
  return [204, 0];
}

/**
 * The check's hold, seconds, and its X-Key-Hash header: EDGE_KEY_HOLD when the asking front (its `X-Edge-Front`) is
 * in step and the key is one the keys file knows (valid, or refused as revoked, suspended or past its grace), so that
 * a push will reach the held answer; EDGE_KEY_TTL otherwise (an unknown key, a front out of step or not named).
 */
function holdOf(
  req: IncomingMessage,
  query: Map<string, string[]>,
  verdict: Credential | ApiError,
  o: { ttl: number; hold: number; edge: HandlerOptions["edge"] },
): [number, string[]] {
  const key = presentedKey(
    query.get("apikey"),
    headerKeyOf(query.get("x_api_key")?.[0], query.get("authorization")?.[0]),
  );
  if (typeof key !== "string" || !KEY_RE.test(key)) return [o.ttl, []];
  const hash = hashKey(key);
  const header = ["X-Key-Hash", hash.slice("sha256:".length)];
  if (!o.edge || (verdict instanceof ApiError && !KNOWN_REFUSALS.has(verdict.code))) return [o.ttl, header];
  const front = req.headers["x-edge-front"];
  const checkQuery = (req.url ?? "").replace(/^[^?]*\??/, "");
  const held = o.edge.mayHold(typeof front === "string" ? front : undefined, hash, checkQuery);
  return [held ? o.hold : o.ttl, header];
}

/** GET /edge/key's responder: the query's key checked, the answer fresh for EDGE_KEY_TTL (or EDGE_KEY_HOLD). */
export const responder: ResponderModule["responder"] = ({ options }) => {
  const o = {
    ttl: options.edgeKeyTtl ?? DEFAULT_EDGE_KEY_TTL,
    hold: options.edgeKeyHold ?? DEFAULT_EDGE_KEY_HOLD,
    edge: options.edge,
  };
  return (req, res, s, _a, info, _headers, nowMs) => {
    const verdict = s.gate.checkKey(req, info.query!, nowMs);
    const [ttl, hashHeader] = holdOf(req, info.query!, verdict, o);
    return sendKeyCheck(req, res, verdict, nowMs, ttl, hashHeader);
  };
};
