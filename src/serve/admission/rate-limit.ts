// Token buckets: per-key request rates, and per-address failed authentications, held in this process's memory; and
// a key's token taken for a request, with its RateLimit-* headers or its 429.
import { ApiError } from "../../errors.ts";

export interface Limit {
  /** Tokens added per second: the sustained request rate. */
  rate: number;
  /** Bucket size: the burst allowed on top of the rate. */
  burst: number;
}

/** Most buckets kept: at this many, full (idle) ones are swept, then the oldest, to bound memory under a flood of addresses. */
export const MAX_BUCKETS = 100_000;

export interface Take {
  ok: boolean;
  /** Whole tokens left after this request. */
  remaining: number;
  /** Seconds until the bucket is full again. */
  reset: number;
  /** Seconds until one token is available (when not ok). */
  retryAfter: number;
}

/** Token buckets by ID: TokenBuckets in this process, or SharedBuckets (shared-limits.ts) through Redis. */
export interface Limiter {
  /** Takes one token for `id` if there is one. */
  take(id: string, limit: Limit, nowMs: number): Take;
  /** Seconds until `id` has a token, 0 if it has one now; takes none. */
  waitFor(id: string, limit: Limit, nowMs: number): number;
  /** The state of `id`'s bucket now (a full one if it was never used); takes none. */
  peek(id: string, limit: Limit, nowMs: number): Take;
  /** Buckets held in this process (0: no ID has been limited yet). */
  readonly size: number;
}

interface Bucket {
  tokens: number;
  at: number;
  /** The limit it was last used with: the sweep refills each bucket by its own rate. */
  limit: Limit;
}

export class TokenBuckets implements Limiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly max: number;

  /** At most `max` buckets (default MAX_BUCKETS). */
  constructor(max = MAX_BUCKETS) {
    this.max = max;
  }

  private refill(id: string, limit: Limit, nowMs: number): Bucket {
    let b = this.buckets.get(id);
    if (!b) {
      if (this.buckets.size >= this.max) this.sweep(nowMs);
      b = { tokens: limit.burst, at: nowMs, limit };
      this.buckets.set(id, b);
    } else {
      if (nowMs > b.at) {
        b.tokens = Math.min(limit.burst, b.tokens + ((nowMs - b.at) / 1000) * limit.rate);
        b.at = nowMs;
      }
      b.limit = limit;
    }
    return b;
  }

  private state(b: Bucket, limit: Limit, ok: boolean): Take {
    return {
      ok,
      remaining: Math.floor(b.tokens),
      reset: Math.ceil((limit.burst - b.tokens) / limit.rate),
      retryAfter: ok ? 0 : Math.max(1, Math.ceil((1 - b.tokens) / limit.rate)),
    };
  }

  /** Takes one token for `id` if there is one. */
  take(id: string, limit: Limit, nowMs: number): Take {
    const b = this.refill(id, limit, nowMs);
    const ok = b.tokens >= 1;
    if (ok) b.tokens -= 1;
    return this.state(b, limit, ok);
  }

  /** Seconds until `id` has a token, 0 if it has one now; takes none (nor makes a bucket: one never used is full). */
  waitFor(id: string, limit: Limit, nowMs: number): number {
    if (!this.buckets.has(id)) return 0;
    const b = this.refill(id, limit, nowMs);
    return b.tokens >= 1 ? 0 : this.state(b, limit, false).retryAfter;
  }

  peek(id: string, limit: Limit, nowMs: number): Take {
    const b = this.buckets.get(id);
    if (!b) return { ok: true, remaining: limit.burst, reset: 0, retryAfter: 0 };
    const tokens = Math.min(limit.burst, b.tokens + (Math.max(0, nowMs - b.at) / 1000) * limit.rate);
    return this.state({ tokens, at: nowMs, limit }, limit, tokens >= 1);
  }

  /**
   * Forgets buckets that have refilled completely (they are the same as new ones); if that leaves more than 90% of
   * `max`, forgets the oldest until it does not (an address that failed long ago may then try again sooner: the
   * price of a bound when more addresses fail at once than it holds). Each sweep frees a tenth of `max` at least,
   * so its cost is spread over that many new buckets rather than paid by each.
   */
  private sweep(nowMs: number): void {
    for (const [id, b] of this.buckets) {
      if (b.tokens + ((nowMs - b.at) / 1000) * b.limit.rate >= b.limit.burst) this.buckets.delete(id);
    }
    const keep = Math.floor(this.max * 0.9);
    for (const id of this.buckets.keys()) {
      if (this.buckets.size <= keep) break;
      this.buckets.delete(id);
    }
  }

  /** Buckets held (for tests and metrics). */
  get size(): number {
    return this.buckets.size;
  }
}

/** The decimal strings of small numbers, made once (header values are checked character by character per response). */
const DECIMALS: string[] = [];
const decimal = (n: number): string =>
  n >= 0 && n < 100_000 && Number.isInteger(n) ? (DECIMALS[n] ??= String(n)) : String(n);

/** Pushes the RateLimit-* headers (IETF draft) of a bucket state onto a flat [name, value, ...] list. */
export function pushRateLimitHeaders(headers: string[], limit: Limit, take: Take): void {
  headers.push(
    "RateLimit-Limit",
    decimal(limit.burst),
    "RateLimit-Remaining",
    decimal(take.remaining),
    "RateLimit-Reset",
    decimal(take.reset),
  );
}

// The 429s made so far, one per distinct answer (its rendering is then made once, in respond.ts): emptied when full.
const tooMany = new Map<string, ApiError>();
const TOO_MANY_MAX = 1_000;

/**
 * Takes a token from the bucket of key `name` (held to `limit`) in `buckets` and pushes its RateLimit-* headers:
 * null, or the 429 when the bucket is empty.
 */
export function takeToken(
  buckets: Limiter,
  name: string,
  limit: Limit,
  nowMs: number,
  headers: string[],
): ApiError | null {
  const take = buckets.take(name, limit, nowMs);
  pushRateLimitHeaders(headers, limit, take);
  if (take.ok) return null;
  const id = `${limit.rate} ${limit.burst} ${take.retryAfter}`;
  let error = tooMany.get(id);
  if (!error) {
    if (tooMany.size >= TOO_MANY_MAX) tooMany.clear();
    tooMany.set(
      id,
      (error = new ApiError(
        429,
        "rate_limited",
        `this key may make ${limit.rate} requests a second (bursts of ${limit.burst}); retry after ${take.retryAfter} s`,
        { "Retry-After": String(take.retryAfter) },
      )),
    );
  }
  return error;
}
