// Limits shared through Redis (REDIS_URL): each token bucket lives in Redis, and each process reserves its tokens in
// batches, so a request never waits for Redis and Redis sees a few calls a second per busy key, not one per request.
// Without Redis (not configured, down, or slow) every bucket falls back to this process's memory, as without it.
import { Redis } from "ioredis";
import type { Limit, Limiter, Take } from "./rate-limit.ts";
import { MAX_BUCKETS, TokenBuckets } from "./rate-limit.ts";

/**
 * Refills the bucket KEYS[1] by the time passed (Redis's clock, the same for every machine), then takes up to
 * ARGV[3] whole tokens from it. ARGV: rate (tokens a second), burst, wanted. Returns {taken, tokens left as a string}.
 * An idle bucket expires once it would be full again: a missing bucket is a full one.
 */
const TAKE_SCRIPT = `
local rate, burst, want = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local b = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens, at = tonumber(b[1]), tonumber(b[2])
if tokens == nil or at == nil then tokens, at = burst, now end
if now > at then
  tokens = math.min(burst, tokens + (now - at) / 1000 * rate)
  at = now
end
local taken = math.max(0, math.min(want, math.floor(tokens)))
tokens = tokens - taken
redis.call('HSET', KEYS[1], 'tokens', string.format('%.6f', tokens), 'at', string.format('%d', at))
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) / rate * 1000) + 1000)
return {taken, string.format('%.6f', tokens)}
`;

/** Where shared buckets are kept: Redis, or nothing while it cannot be reached. */
export interface TokenStore {
  /** True while reservations can be made; false sends every bucket to the per-process fallback. */
  readonly available: boolean;
  /** Counts the store's connections: after a new one (Redis back, perhaps restarted empty) what was learnt is old. */
  readonly connection: number;
  /** Takes up to `want` whole tokens from bucket `id`: how many it took, and the tokens it left there. */
  reserve(id: string, limit: Limit, want: number): Promise<{ taken: number; left: number }>;
}

/** What a reservation of bucket `id` is sized by: how many tokens a process takes at once for `limit`. */
export type BatchSize = (limit: Limit) => number;

/**
 * A tenth of a second's worth of the rate (1 to 1,000 tokens). Across N processes a key may be granted at most N
 * batches more than its limit (each process's requests granted ahead of a reply), and at most N batches fewer (the
 * tokens reserved and not used): over 10 s that is N% of the limit or less.
 */
export const keyBatch: BatchSize = (limit) => Math.min(1_000, Math.max(1, Math.ceil(limit.rate / 10)));
/** Failed authentications are taken one at a time. */
export const oneAtATime: BatchSize = () => 1;

interface Lease {
  /** Tokens reserved from the shared bucket and not used yet. */
  tokens: number;
  /** Requests granted before their tokens were reserved: paid out of the next reservation. */
  debt: number;
  /** Tokens left in the shared bucket at the last reply, and when (ms): what the RateLimit headers report. */
  shared: number;
  at: number;
  /** A reservation is on its way. */
  pending: boolean;
  /** The shared bucket was empty: not asked again before this instant (ms). */
  quietUntil: number;
}

/**
 * Token buckets kept in a TokenStore (Redis). `take` answers at once from the tokens this process has reserved; a
 * request that finds none is still granted while the process owes fewer than a batch (paid from the next
 * reservation), so a key's first request does not wait for Redis either. Reservations go out when the reserved
 * tokens run low, one at a time per bucket. While the store is unavailable, `fallback` (this process's memory)
 * answers instead.
 */
export class SharedBuckets implements Limiter {
  private readonly leases = new Map<string, Lease>();
  /** The store's connection the leases were made on. */
  private connection = 0;

  private readonly store: TokenStore;
  /** Prefix of the buckets' IDs in the store ("key:", "address:"). */
  private readonly prefix: string;
  private readonly batchOf: BatchSize;
  private readonly fallback: Limiter;
  private readonly max: number;

  constructor(
    store: TokenStore,
    prefix: string,
    batchOf: BatchSize,
    fallback: Limiter = new TokenBuckets(),
    max = MAX_BUCKETS,
  ) {
    this.store = store;
    this.prefix = prefix;
    this.batchOf = batchOf;
    this.fallback = fallback;
    this.max = max;
  }

  take(id: string, limit: Limit, nowMs: number): Take {
    if (!this.store.available) return this.fallback.take(id, limit, nowMs);
    if (this.store.connection !== this.connection) this.forget();
    const lease = this.leaseOf(id, limit, nowMs);
    const batch = this.batchOf(limit);
    let ok = true;
    if (lease.tokens >= 1) lease.tokens -= 1;
    else if (lease.debt < batch) lease.debt += 1;
    else ok = false;
    if (!lease.pending && nowMs >= lease.quietUntil && (lease.debt > 0 || lease.tokens < batch / 2)) {
      this.reserve(id, lease, limit, Math.max(1, lease.debt + batch - Math.floor(lease.tokens)), nowMs);
    }
    const left = Math.max(0, this.sharedNow(lease, limit, nowMs) + lease.tokens - lease.debt);
    return {
      ok,
      remaining: Math.floor(left),
      reset: Math.ceil((limit.burst - left) / limit.rate),
      retryAfter: ok ? 0 : this.wait(lease, limit, nowMs),
    };
  }

  waitFor(id: string, limit: Limit, nowMs: number): number {
    if (!this.store.available) return this.fallback.waitFor(id, limit, nowMs);
    if (this.store.connection !== this.connection) this.forget();
    const lease = this.leases.get(id);
    if (lease === undefined || lease.tokens >= 1 || lease.debt < this.batchOf(limit)) return 0;
    return this.wait(lease, limit, nowMs);
  }

  /** As this process last saw the shared bucket (refilled since), less what it holds and owes. */
  peek(id: string, limit: Limit, nowMs: number): Take {
    if (!this.store.available) return this.fallback.peek(id, limit, nowMs);
    const lease = this.store.connection === this.connection ? this.leases.get(id) : undefined;
    if (lease === undefined) return { ok: true, remaining: limit.burst, reset: 0, retryAfter: 0 };
    const left = Math.max(0, this.sharedNow(lease, limit, nowMs) + lease.tokens - lease.debt);
    return {
      ok: left >= 1,
      remaining: Math.floor(left),
      reset: Math.ceil((limit.burst - left) / limit.rate),
      retryAfter: left >= 1 ? 0 : this.wait(lease, limit, nowMs),
    };
  }

  get size(): number {
    return this.leases.size + this.fallback.size;
  }

  /** A new connection: the leases (their reserved tokens, what the shared buckets held) are dropped. */
  private forget(): void {
    this.leases.clear();
    this.connection = this.store.connection;
  }

  /** Seconds until the shared bucket could pay this process's debt and one request more. */
  private wait(lease: Lease, limit: Limit, nowMs: number): number {
    return Math.max(1, Math.ceil((lease.debt + 1 - this.sharedNow(lease, limit, nowMs)) / limit.rate));
  }

  /** The shared bucket's tokens as last seen, refilled by the time since (other processes may have taken some). */
  private sharedNow(lease: Lease, limit: Limit, nowMs: number): number {
    return Math.min(limit.burst, lease.shared + (Math.max(0, nowMs - lease.at) / 1000) * limit.rate);
  }

  private leaseOf(id: string, limit: Limit, nowMs: number): Lease {
    let lease = this.leases.get(id);
    if (lease === undefined) {
      // At the bound, the oldest tenth goes: their reserved tokens are given up (a process may grant less, never more).
      if (this.leases.size >= this.max) {
        let drop = Math.ceil(this.max / 10);
        for (const old of this.leases.keys()) {
          if (drop-- <= 0) break;
          this.leases.delete(old);
        }
      }
      lease = { tokens: 0, debt: 0, shared: limit.burst, at: nowMs, pending: false, quietUntil: 0 };
      this.leases.set(id, lease);
    }
    return lease;
  }

  private reserve(id: string, lease: Lease, limit: Limit, want: number, nowMs: number): void {
    lease.pending = true;
    this.store.reserve(this.prefix + id, limit, want).then(
      ({ taken, left }) => {
        const paid = Math.min(lease.debt, taken);
        lease.debt -= paid;
        lease.tokens += taken - paid;
        lease.shared = left;
        lease.at = nowMs;
        // Fewer than asked: the shared bucket is empty until it has refilled a token.
        if (taken < want) lease.quietUntil = nowMs + Math.ceil(((1 - left) / limit.rate) * 1000);
        lease.pending = false;
      },
      () => {
        // The store has marked itself unavailable (the fallback answers now); what was owed is forgiven.
        lease.debt = 0;
        lease.pending = false;
      },
    );
  }
}

/** The API's buckets in Redis: per key, and failed authentications per address. */
export interface SharedLimits {
  keys: Limiter;
  failures: Limiter;
  /** Whether the limits are shared now (false while Redis cannot be reached). */
  readonly shared: boolean;
  close(): Promise<void>;
}

export interface SharedLimitsEvents {
  /** Redis answers (at start, and after an outage): limits are shared. */
  onConnected(): void;
  /** Redis stopped answering: once per outage; limits are per process until onConnected. */
  onUnavailable(err: unknown): void;
}

/** Prefix of every bucket this API keeps in Redis. */
export const REDIS_PREFIX = "flash-sale-api:limit:";
/**
 * A reservation that takes longer is given up and Redis treated as down until it has reconnected. Until then a key
 * that has used its batch is refused (a hung Redis can cost a busy key up to this long of 429s); answering such
 * requests from the process's own bucket sooner was measured to let a key through 1.4 times its limit on a loaded
 * machine, where a reply can be late without Redis being down.
 */
export const REDIS_TIMEOUT_MS = 250;

type ScriptedRedis = Redis & {
  takeTokens(key: string, rate: number, burst: number, want: number): Promise<unknown>;
};

/** Redis answered something other than what its script returns: treated as Redis being unavailable. */
export class RedisReplyError extends Error {
  constructor(what: string, reply: unknown) {
    super(`Redis answered the token-bucket script with ${what}: ${describeReply(reply)}`);
    this.name = "RedisReplyError";
  }
}

/** A reply as a short line for the log: JSON where it can be, at most 100 characters. */
function describeReply(reply: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(reply, (_, v: unknown) => (typeof v === "bigint" ? `${v}n` : v)) ?? String(reply);
  } catch {
    text = String(reply);
  }
  return text.length > 100 ? `${text.slice(0, 100)}...` : text;
}

/** The tokens left, as the script writes them (`%.6f`): digits, and up to 6 decimals. */
const LEFT_RE = /^\d{1,20}(?:\.\d{1,6})?$/;

/**
 * Parses the reply to TAKE_SCRIPT for a reservation of up to `want` tokens from a bucket of `limit`: an array of
 * exactly an integer `taken` (0 to `want`) and a decimal string `left` (0 to the burst). Anything else (another
 * shape, a string or a float for `taken`, NaN, a negative or huge number, nil) is a RedisReplyError: used unchecked,
 * `["abc","xyz"]` made every request a 429 with `Retry-After: NaN`, and `[1000000000,"0"]` granted 600 requests past a
 * burst of 200.
 */
export function parseTakeReply(reply: unknown, limit: Limit, want: number): { taken: number; left: number } {
  if (!Array.isArray(reply) || reply.length !== 2) throw new RedisReplyError("not a pair", reply);
  const [taken, left] = reply as unknown[];
  if (typeof taken !== "number" || !Number.isSafeInteger(taken) || taken < 0 || taken > want) {
    throw new RedisReplyError(`a count of tokens taken that is not a whole number from 0 to ${want}`, reply);
  }
  const tokens = typeof left === "string" && LEFT_RE.test(left) ? Number(left) : NaN;
  if (!(tokens >= 0 && tokens <= limit.burst)) {
    throw new RedisReplyError(`a count of tokens left that is not a number from 0 to ${limit.burst}`, reply);
  }
  return { taken, left: tokens };
}

/**
 * On each new connection, nothing is reserved from this bucket of its own (no key's, no address's), to check that
 * Redis runs the script and answers as it should before the limits are shared: a Redis that answers wrongly stays
 * unavailable, its outage logged once, rather than shared again at each reconnection.
 */
const PROBE_ID = "probe";
const PROBE_LIMIT: Limit = { rate: 1, burst: 1 };

/**
 * Connects to Redis at `url` (redis:// or rediss://) and returns the shared buckets. The server starts at once: until
 * Redis answers, and whenever it stops or answers the script wrongly (parseTakeReply), limits are per process. It
 * reconnects by itself (every second at most), and shares the limits again once the script answers as it should.
 */
export function connectSharedLimits(url: string, events: SharedLimitsEvents): SharedLimits {
  /** Script calls that failed (an error, a timeout, a wrong reply) since the script last answered as it should. */
  let failures = 0;
  const client = new Redis(url, {
    // A command while disconnected fails at once (no queue): the fallback answers instead.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: REDIS_TIMEOUT_MS,
    connectTimeout: 2_000,
    // Sooner after a lost connection than after a script call that failed (ioredis's `times` starts again with each
    // connection, so a Redis that connects and then answers wrongly would otherwise be asked again 10 times a second).
    retryStrategy: (times) => Math.min(100 * (times + failures), 1_000),
    connectionName: "flash-sale-api",
  }) as ScriptedRedis;
  client.defineCommand("takeTokens", { numberOfKeys: 1, lua: TAKE_SCRIPT });
  let ready = false;
  let down = false;
  let connection = 0;
  let closed = false;
  const unavailable = (err: unknown) => {
    ready = false;
    // A reservation or probe failing because close() ended the connection is no outage.
    if (!down && !closed) {
      down = true;
      events.onUnavailable(err);
    }
  };
  /** Takes up to `want` tokens from bucket `id`; a timeout, an error or a wrong reply: Redis is unavailable. */
  const take = async (id: string, limit: Limit, want: number) => {
    try {
      return parseTakeReply(await client.takeTokens(REDIS_PREFIX + id, limit.rate, limit.burst, want), limit, want);
    } catch (err) {
      // Stop using Redis and reconnect (a hung server is noticed this way); the limits are shared again once the
      // script answers as it should on the new connection (the probe below).
      failures++;
      unavailable(err);
      if (client.status === "ready") client.disconnect(true);
      throw err;
    }
  };
  client.on("ready", () => {
    // Shared once the script answers as it should: a Redis that answers it wrongly stays unavailable (logged once).
    take(PROBE_ID, PROBE_LIMIT, 0).then(
      () => {
        if (closed) return;
        failures = 0;
        connection++;
        ready = true;
        down = false;
        events.onConnected();
      },
      () => {},
    );
  });
  client.on("error", unavailable);
  client.on("close", () => unavailable(new Error("connection to Redis closed")));
  const store: TokenStore = {
    get available() {
      return ready;
    },
    get connection() {
      return connection;
    },
    reserve: take,
  };
  return {
    keys: new SharedBuckets(store, "key:", keyBatch),
    failures: new SharedBuckets(store, "address:", oneAtATime),
    get shared() {
      return ready;
    },
    close: async () => {
      closed = true;
      client.removeAllListeners("close");
      client.removeAllListeners("error");
      client.on("error", () => {});
      await client.quit().catch(() => client.disconnect());
    },
  };
}
