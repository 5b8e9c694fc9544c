// Token buckets: per-key request rates, and per-address failed authentications, held in this process's memory.

export interface Limit {
  /** Tokens added per second: the sustained request rate. */
  rate: number;
  /** Bucket size: the burst allowed on top of the rate. */
  burst: number;
}

/** Per key, unless the keys file says otherwise. */
export const DEFAULT_KEY_LIMIT: Limit = { rate: 50, burst: 200 };
/** Failed authentications per client address: ten at once, then one a second. */
export const DEFAULT_AUTH_FAILURE_LIMIT: Limit = { rate: 1, burst: 10 };
/** Buckets kept before full (idle) ones are swept: bounds memory under a flood of addresses. */
const SWEEP_AT = 100_000;

export interface Take {
  ok: boolean;
  /** Whole tokens left after this request. */
  remaining: number;
  /** Seconds until the bucket is full again. */
  reset: number;
  /** Seconds until one token is available (when not ok). */
  retryAfter: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();

  private refill(id: string, limit: Limit, nowMs: number): Bucket {
    let b = this.buckets.get(id);
    if (!b) {
      if (this.buckets.size >= SWEEP_AT) this.sweep(limit, nowMs);
      b = { tokens: limit.burst, at: nowMs };
      this.buckets.set(id, b);
    } else if (nowMs > b.at) {
      b.tokens = Math.min(limit.burst, b.tokens + ((nowMs - b.at) / 1000) * limit.rate);
      b.at = nowMs;
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

  /** The bucket's state without taking a token. */
  peek(id: string, limit: Limit, nowMs: number): Take {
    const b = this.refill(id, limit, nowMs);
    return this.state(b, limit, b.tokens >= 1);
  }

  /** Forgets buckets that have refilled completely: they are the same as new ones. */
  private sweep(limit: Limit, nowMs: number): void {
    for (const [id, b] of this.buckets) {
      if (b.tokens + ((nowMs - b.at) / 1000) * limit.rate >= limit.burst) this.buckets.delete(id);
    }
  }
}

/** The RateLimit-* headers (IETF draft) of a bucket state, as a flat [name, value, ...] list. */
export function rateLimitHeaders(limit: Limit, take: Take): string[] {
  return ["RateLimit-Limit", String(limit.burst), "RateLimit-Remaining", String(take.remaining), "RateLimit-Reset", String(take.reset)];
}
