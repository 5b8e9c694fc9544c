// Admission: the API-key check and the rate limits, in the order that keeps guessing keys slow.
import type { IncomingMessage } from "node:http";
import { ApiError } from "../errors.ts";
import type { KeyRecord } from "../keys/keys-file.ts";
import type { KeyRing } from "./keys.ts";
import { DEFAULT_AUTH_FAILURE_LIMIT, DEFAULT_KEY_LIMIT, pushRateLimitHeaders, TokenBuckets } from "./rate-limit.ts";
import type { Limit } from "./rate-limit.ts";

export interface AdmissionOptions {
  /** Request rate per key, unless the key's record sets its own. Default DEFAULT_KEY_LIMIT (50/s, burst 200). */
  keyLimit?: Limit;
  /** Failed authentications per client address; past it every attempt is a 401 without the key being checked. Default DEFAULT_AUTH_FAILURE_LIMIT (1/s, burst 10). */
  authFailureLimit?: Limit;
  /** Take the client address from the last X-Forwarded-For entry (behind a proxy or CDN you trust). Default false. */
  trustProxy?: boolean;
}

/** A valid key and the rate it may be used at: what authenticating a request's key yields. */
export interface Credential {
  name: string;
  limit: Limit;
}

/**
 * Returns admit(): the request's credential, or a thrown 401/429; the RateLimit-* headers are pushed onto `headers`.
 * Given `known` (this query string's key, authenticated earlier under the same key ring), the key is not looked up
 * again; the address's failure limit and the key's rate limit apply to every request all the same.
 */
export function createAdmission(options: AdmissionOptions) {
  const keyLimit = options.keyLimit ?? DEFAULT_KEY_LIMIT;
  const authFailureLimit = options.authFailureLimit ?? DEFAULT_AUTH_FAILURE_LIMIT;
  const keyBuckets = new TokenBuckets();
  const failureBuckets = new TokenBuckets();
  // A key's own limit, made once per record (a reload makes new records).
  const ownLimits = new WeakMap<KeyRecord, Limit>();
  const limitOf = (record: KeyRecord | undefined): Limit => {
    if (!record?.rate) return keyLimit;
    let limit = ownLimits.get(record);
    if (!limit) ownLimits.set(record, (limit = { rate: record.rate, burst: record.burst ?? Math.max(1, Math.ceil(record.rate * 4)) }));
    return limit;
  };

  const clientAddress = (req: IncomingMessage): string => {
    if (options.trustProxy) {
      const xff = req.headers["x-forwarded-for"];
      const last = (Array.isArray(xff) ? xff.join(",") : xff)?.split(",").pop()?.trim();
      if (last) return last;
    }
    return req.socket.remoteAddress ?? "";
  };

  return (keys: KeyRing, req: IncomingMessage, query: Map<string, string[]>, nowMs: number, headers: string[], known?: Credential): Credential => {
    // An address that has never failed has no bucket: one size check instead of a lookup, on every request.
    if (failureBuckets.size > 0) {
      const address = clientAddress(req);
      const wait = failureBuckets.waitFor(address, authFailureLimit, nowMs);
      if (wait > 0 && query.has("apikey")) {
        throw new ApiError(401, "api_key_invalid", "too many failed API-key attempts from this address; the key was not checked", { "Retry-After": String(wait) });
      }
    }
    let credential = known;
    if (!credential) {
      let name: string;
      try {
        name = keys.authenticate(query);
      } catch (err) {
        if (err instanceof ApiError && err.code === "api_key_invalid") failureBuckets.take(clientAddress(req), authFailureLimit, nowMs);
        throw err;
      }
      credential = { name, limit: limitOf(keys.record(name)) };
    }
    const { limit } = credential;
    const take = keyBuckets.take(credential.name, limit, nowMs);
    pushRateLimitHeaders(headers, limit, take);
    if (!take.ok) {
      throw new ApiError(429, "rate_limited", `this key may make ${limit.rate} requests a second (bursts of ${limit.burst}); retry after ${take.retryAfter} s`, { "Retry-After": String(take.retryAfter) });
    }
    return credential;
  };
}
