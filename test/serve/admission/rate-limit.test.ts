// Rate limits: per-key token buckets with RateLimit-* headers and 429s, and failed authentication limited per address.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKey } from "../../../src/keys/keys-file.ts";
import { DEFAULT_AUTH_FAILURE_LIMIT } from "../../../src/config/defaults.ts";
import { TokenBuckets } from "../../../src/serve/admission/rate-limit.ts";
import { startTestApi, T0 } from "../../helpers/fixture.ts";
import type { TestApi } from "../../helpers/fixture.ts";

let api: TestApi;
let limited: string;
let other: string;
beforeAll(async () => {
  api = await startTestApi(undefined, { authFailureLimit: DEFAULT_AUTH_FAILURE_LIMIT });
  limited = await createKey(api.keysFile, "limited", new Date(), { rate: 2, burst: 3 });
  other = await createKey(api.keysFile, "other", new Date(), { rate: 2, burst: 3 });
  await api.handler.reload();
});
afterAll(() => api.close());

const get = (key: string) => api.get(`/v1/sales/active.json?apikey=${key}`);
const headers = (res: Response) =>
  ["ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"].map((h) => res.headers.get(h));

describe("per-key rate limit", () => {
  it("counts down, answers 429 with Retry-After when empty, and refills with time", async () => {
    api.clock.now = T0;
    expect(headers(await get(limited))).toEqual(["3", "2", "1"]);
    expect(headers(await get(limited))).toEqual(["3", "1", "1"]);
    expect(headers(await get(limited))).toEqual(["3", "0", "2"]);
    const refused = await get(limited);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(refused.headers.get("content-type")).toBe("application/problem+json");
    expect(((await refused.json()) as { code: string }).code).toBe("rate_limited");
    // another key is not affected
    expect((await get(other)).status).toBe(200);
    api.clock.now = T0 + 1; // two tokens back
    expect((await get(limited)).status).toBe(200);
    expect((await get(limited)).status).toBe(200);
    expect((await get(limited)).status).toBe(429);
  });

  it("sends the headers on errors after authentication too", async () => {
    api.clock.now = T0 + 100;
    const res = await api.get(`/v1/products/999/detail.json?apikey=${other}`);
    expect(res.status).toBe(404);
    expect(headers(res)[0]).toBe("3");
  });
});

describe("failed authentication per address", () => {
  it("after the burst of failures, every attempt with a wrong key is the lockout's 401 until it refills; valid keys are served", async () => {
    api.clock.now = T0 + 1000;
    const bad = "B".repeat(32);
    for (let i = 0; i < DEFAULT_AUTH_FAILURE_LIMIT.burst; i++) expect((await get(bad)).status).toBe(401);
    const blocked = await get("C".repeat(32));
    expect(blocked.status).toBe(401);
    expect(blocked.headers.get("retry-after")).toBe("1");
    expect(((await blocked.json()) as { detail: string }).detail).toContain("too many failed");
    // Behind a NAT, a CDN or the shipped proxies many clients share an address: one guesser locks no one else out.
    expect((await get(other)).status).toBe(200);
    api.clock.now = T0 + 1001;
    expect(((await (await get("C".repeat(32))).json()) as { detail: string }).detail).toContain("unknown or revoked");
    expect((await get("C".repeat(32))).headers.get("retry-after")).toBe("1"); // and locked again
  });
});

describe("token buckets", () => {
  it("checking an address that never failed creates no bucket (a flood of addresses costs no memory)", () => {
    const buckets = new TokenBuckets();
    for (let i = 0; i < 1000; i++)
      expect(buckets.waitFor(`10.0.${i >> 8}.${i & 255}`, DEFAULT_AUTH_FAILURE_LIMIT, 0)).toBe(0);
    expect(buckets.size).toBe(0);
    for (let i = 0; i < 10; i++) buckets.take("10.0.0.1", DEFAULT_AUTH_FAILURE_LIMIT, 0);
    expect(buckets.size).toBe(1);
    expect(buckets.waitFor("10.0.0.1", DEFAULT_AUTH_FAILURE_LIMIT, 0)).toBe(1);
    expect(buckets.waitFor("10.0.0.1", DEFAULT_AUTH_FAILURE_LIMIT, 1000)).toBe(0);
  });
});

describe("TokenBuckets under a flood of addresses", () => {
  it("holds at most its bound when more addresses fail at once than it holds, and keeps the newest", () => {
    const buckets = new TokenBuckets(1_000);
    const limit = { rate: 1, burst: 10 };
    // 5,000 addresses each fail once in the same second: no bucket is full again, so none is idle.
    for (let i = 0; i < 5_000; i++) {
      buckets.take(`10.0.${i >> 8}.${i & 255}`, limit, 1_000_000);
      expect(buckets.size).toBeLessThanOrEqual(1_000);
    }
    expect(buckets.waitFor("10.0.19.135", limit, 1_000_000)).toBe(0); // 4,999's bucket is held, with 9 tokens left
    expect(buckets.take("10.0.19.135", limit, 1_000_000).remaining).toBe(8);
  });

  it("sweeps full buckets first: addresses that failed long ago go before ones failing now", () => {
    const buckets = new TokenBuckets(100);
    const limit = { rate: 1, burst: 10 };
    for (let i = 0; i < 50; i++) buckets.take(`old${i}`, limit, 0);
    for (let i = 0; i < 50; i++) for (let k = 0; k < 10; k++) buckets.take(`new${i}`, limit, 60_000);
    buckets.take("one-more", limit, 60_000);
    expect(buckets.size).toBe(51);
    expect(buckets.waitFor("new0", limit, 60_000)).toBe(1);
  });
});
