// The keys' side of admission: a request's credential from its key (a key that is not valid counting against the
// client's address, which is locked out past its limit), each refusal an ApiError made once for every request
// refused the same way. The key's rate limit is taken by admission (rate-limit.ts's takeToken).
import type { IncomingMessage } from "node:http";
import { DEFAULT_AUTH_FAILURE_LIMIT, DEFAULT_KEY_RATE_LIMIT } from "../../config/defaults.ts";
import { ApiError } from "../../errors.ts";
import type { KeyRecord } from "../../keys/keys-file.ts";
import type { KeyRing } from "./api-key-check.ts";
import { createClientLimitKey } from "./client-address.ts";
import { presentedKey } from "./presented-key.ts";
import { TokenBuckets } from "./rate-limit.ts";
import type { Limit, Limiter } from "./rate-limit.ts";

/** The limits a credential is held to, and where their buckets are kept. */
export interface CredentialOptions {
  /** Request rate per key, unless the key's record sets its own. Default DEFAULT_KEY_RATE_LIMIT (50/s, burst 200). */
  keyLimit?: Limit;
  /**
   * Failed authentications per client address; past it, every further attempt with a key that is not valid is a 401
   * without the key being counted again (valid keys from the address are still served). Default
   * DEFAULT_AUTH_FAILURE_LIMIT (1/s, burst 10).
   */
  authFailureLimit?: Limit;
  /**
   * Proxies whose X-Forwarded-For names the client (addresses or CIDR networks, e.g. `127.0.0.1`, `10.0.0.0/8`);
   * from any other peer the header is ignored. Default none: the peer is the client.
   */
  trustProxy?: readonly string[];
  /** Where the buckets of both limits are kept. Default: this process's memory (shared-limits.ts keeps them in Redis). */
  limits?: { keys: Limiter; failures: Limiter; readonly shared?: boolean };
}

/** A valid key and the rate it may be used at: what authenticating a request's key yields. */
export interface Credential {
  name: string;
  limit: Limit;
  /** Epoch ms from which the key is refused (a key replaced by `rotate`, in its grace period); Infinity otherwise. */
  until: number;
  /** The name its requests are counted (src/usage/) and logged under: `name`, or a replaced key's (PREVIOUS_SUFFIX). */
  usage: string;
}

/** Returns authenticate and the key buckets (for takeToken, and to read without taking), under `options`' limits. */
export function createCredentials(options: CredentialOptions) {
  const keyLimit = options.keyLimit ?? DEFAULT_KEY_RATE_LIMIT;
  const authFailureLimit = options.authFailureLimit ?? DEFAULT_AUTH_FAILURE_LIMIT;
  const keyBuckets = options.limits?.keys ?? new TokenBuckets();
  const failureBuckets = options.limits?.failures ?? new TokenBuckets();
  // A key's own limit, made once per record (a reload makes new records).
  const ownLimits = new WeakMap<KeyRecord, Limit>();
  const limitOf = (record: KeyRecord | undefined): Limit => {
    if (!record?.rate) return keyLimit;
    let limit = ownLimits.get(record);
    if (!limit)
      ownLimits.set(
        record,
        (limit = { rate: record.rate, burst: record.burst ?? Math.max(1, Math.ceil(record.rate * 4)) }),
      );
    return limit;
  };

  // Rejections repeat: one error object per distinct answer (its rendering is then made once, in respond.ts).
  const rejections = new Map<string, ApiError>();
  const rejection = (key: string, make: () => ApiError): ApiError => {
    let error = rejections.get(key);
    if (!error) {
      if (rejections.size >= 1_000) rejections.clear();
      rejections.set(key, (error = make()));
    }
    return error;
  };

  const clientAddress = createClientLimitKey(options.trustProxy ?? []);

  /** The 401 of an address past its failure limit, with the seconds until it may try again. */
  const lockedOut = (wait: number): ApiError =>
    rejection(
      `locked ${wait}`,
      () =>
        new ApiError(
          401,
          "api_key_invalid",
          "too many failed API-key attempts from this address; this key was not counted (valid keys are still served)",
          { "Retry-After": String(wait) },
          "address_locked_out",
        ),
    );

  /**
   * The request's credential, or the error that answers it: the key presented in the query's `apikey` or in the
   * headers (`headerKey`, presented-key.ts), checked. A key that is not valid counts as a failure against the
   * client's address; once the address is past its limit, such attempts get the lockout's 401 (with Retry-After)
   * instead. A valid key is served whatever its address did: behind a NAT, a CDN or a proxy many clients share one.
   */
  const authenticate = (
    keys: KeyRing,
    req: IncomingMessage,
    query: Map<string, string[]>,
    headerKey: string | ApiError | undefined,
    nowMs: number,
  ): Credential | ApiError => {
    const key = presentedKey(query.get("apikey"), headerKey);
    const found = key instanceof ApiError ? key : keys.check(key, nowMs);
    if (!(found instanceof ApiError)) {
      return { name: found.name, limit: limitOf(keys.record(found.name)), until: found.until, usage: found.usage };
    }
    if (found.code !== "api_key_invalid") return found;
    const address = clientAddress(req);
    const wait = failureBuckets.size === 0 ? 0 : failureBuckets.waitFor(address, authFailureLimit, nowMs);
    if (wait > 0) return lockedOut(wait);
    failureBuckets.take(address, authFailureLimit, nowMs);
    return found;
  };

  return { authenticate, keyBuckets };
}
