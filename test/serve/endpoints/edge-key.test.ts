// GET /edge/key, the fronts' key check: answered to TRUST_PROXY's proxies only, from the key ring, cacheable for
// EDGE_KEY_TTL (less for a replaced key near the end of its grace), refusals too but for an address's lockout; it takes
// no token from the key's bucket and is not logged as the key's request.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKey, rotateKey } from "../../../src/keys/keys-file.ts";
import type { RequestLog } from "../../../src/serve/handler.ts";
import { startTestApi, T0 } from "../../helpers/fixture.ts";
import type { TestApi } from "../../helpers/fixture.ts";

let api: TestApi;
let untrusting: TestApi;
let own: string;
let oldKey: string;
const logs: RequestLog[] = [];

beforeAll(async () => {
  api = await startTestApi(undefined, {
    trustProxy: ["127.0.0.1"],
    edgeKeyTtl: 5,
    authFailureLimit: { rate: 1, burst: 2 },
    log: (entry) => logs.push(entry),
  });
  own = await createKey(api.keysFile, "own-limits", new Date(), { rate: 1, burst: 1 });
  oldKey = await createKey(api.keysFile, "rotated", new Date());
  await rotateKey(api.keysFile, "rotated", 60_000, new Date(T0 * 1000)); // the old key works until T0 + 60
  await api.handler.reload();
  untrusting = await startTestApi();
});
afterAll(async () => {
  await api?.close();
  await untrusting?.close();
});

/** A key check as a front asks it, for the client at `client`. */
async function check(query: string, client = "192.0.2.1", url = api.url) {
  const res = await fetch(`${url}/edge/key${query}`, { headers: { "X-Forwarded-For": client } });
  const text = await res.text();
  return {
    status: res.status,
    cacheControl: res.headers.get("cache-control"),
    key: [res.headers.get("x-key-name"), res.headers.get("x-key-rate"), res.headers.get("x-key-burst")],
    retryAfter: res.headers.get("retry-after"),
    code: text ? (JSON.parse(text) as { code: string }).code : null,
  };
}

describe("GET /edge/key", () => {
  it("is a 404 to a peer that is not one of TRUST_PROXY's proxies", async () => {
    untrusting.clock.now = T0;
    const r = await check(`?apikey=${untrusting.key}`, "192.0.2.1", untrusting.url);
    expect([r.status, r.code, r.key[0]]).toEqual([404, "not_found", null]);
  });

  it("answers a valid key with its name and limits, fresh for EDGE_KEY_TTL, and takes no token", async () => {
    api.clock.now = T0;
    expect(await check(`?apikey=${api.key}`)).toMatchObject({
      status: 204,
      cacheControl: "public, max-age=5",
      key: ["test", "1000000000", "1000000000"],
    });
    // A key with a rate of its own (1/s, bucket of 1): checked five times, its one token is still there.
    for (let i = 0; i < 5; i++) expect((await check(`?apikey=${own}`)).key).toEqual(["own-limits", "1", "1"]);
    const used = await fetch(`${api.url}/v1/sales/active.json?apikey=${own}`);
    expect([used.status, used.headers.get("ratelimit-remaining")]).toEqual([200, "0"]);
    // The other parameters of a request are nothing to it.
    expect((await check(`?affid=x&apikey=${api.key}&callback=cb`)).status).toBe(204);
  });

  it("a replaced key in its grace period is fresh no longer than the grace lasts", async () => {
    api.clock.now = T0 + 57.5;
    expect(await check(`?apikey=${oldKey}`)).toMatchObject({ status: 204, cacheControl: "public, max-age=2" });
    api.clock.now = T0 + 60;
    expect(await check(`?apikey=${oldKey}`)).toMatchObject({ status: 401, cacheControl: "public, max-age=5" });
  });

  it("refuses a key as the API does, cacheable; the lockout of an address is not", async () => {
    api.clock.now = T0 + 1000;
    // [query, code]: each a failure of 192.0.2.7's but the missing key (not an attempt).
    const refusals: [string, string][] = [
      ["", "api_key_missing"],
      [`?apikey=${"A".repeat(32)}`, "api_key_invalid"],
      [`?apikey=${api.key}&apikey=${api.key}`, "api_key_invalid"],
    ];
    for (const [query, code] of refusals) {
      expect(await check(query, "192.0.2.7")).toMatchObject({ status: 401, code, cacheControl: "public, max-age=5" });
    }
    // Two failures used 192.0.2.7's burst: the next wrong key is its lockout, with Retry-After, never cached.
    expect(await check(`?apikey=${"B".repeat(32)}`, "192.0.2.7")).toMatchObject({
      status: 401,
      code: "api_key_invalid",
      cacheControl: "no-store",
      retryAfter: "1",
    });
    // A valid key from that address is still allowed, and a wrong one from another address is refused as such.
    expect((await check(`?apikey=${api.key}`, "192.0.2.7")).status).toBe(204);
    expect(await check(`?apikey=${"B".repeat(32)}`, "192.0.2.8")).toMatchObject({
      status: 401,
      cacheControl: "public, max-age=5",
      retryAfter: null,
    });
  });

  it("a malformed query is the API's 400 (a front then sends the request itself to the server)", async () => {
    expect((await check("?apikey=%ZZ")).status).toBe(400);
  });

  it("logs its requests without a key's name (a check is not a use of the key)", () => {
    const checks = logs.filter((l) => l.path === "/edge/key");
    expect(checks.length).toBeGreaterThan(10);
    expect(checks.every((l) => l.key === undefined)).toBe(true);
  });
});
