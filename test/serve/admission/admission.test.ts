// Admission, every case three times: the first two requests of a target take the full path (parse, key, parameters,
// path), the second is remembered, and the third takes the remembered one (or the parsed-target cache, for a
// refusal); all must answer alike. A target asked for once (a new affid every request) is not remembered.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKey, revokeKey, rotateKey } from "../../../src/keys/keys-file.ts";
import { startTestApi, T0 } from "../../helpers/fixture.ts";
import type { TestApi } from "../../helpers/fixture.ts";

let api: TestApi;
let revoked: string;
let rotated: string;
let slow: string;
beforeAll(async () => {
  api = await startTestApi(undefined, { authFailureLimit: { rate: 1, burst: 3 } });
  revoked = await createKey(api.keysFile, "revoked", new Date(T0 * 1000));
  await revokeKey(api.keysFile, "revoked", new Date(T0 * 1000));
  const old = await createKey(api.keysFile, "rotated", new Date(T0 * 1000));
  await rotateKey(api.keysFile, "rotated", 60_000, new Date(T0 * 1000)); // the old key works until T0 + 60
  rotated = old;
  slow = await createKey(api.keysFile, "slow", new Date(T0 * 1000), { rate: 0.001, burst: 1 });
  await api.handler.reload();
});
afterAll(() => api.close());

const LIST = "/v1/sales/active.json";
const get = (target: string) => api.get(target);

/** Sends `target` three times (cold, cold and remembered, remembered); returns each answer's status and problem code. */
async function thrice(target: string): Promise<Array<[number, string | undefined]>> {
  const out: Array<[number, string | undefined]> = [];
  for (let i = 0; i < 3; i++) {
    const res = await get(target);
    const body = (await res.json()) as { code?: string };
    out.push([res.status, body.code]);
  }
  return out;
}

describe("admission, cold and remembered", () => {
  const list = LIST;
  it.each<[string, () => string, number, string | undefined]>([
    ["a valid key", () => `${list}?apikey=${api.key}`, 200, undefined],
    ["a valid key, with affid and callback", () => `${list}?apikey=${api.key}&affid=a1`, 200, undefined],
    ["a valid key, no such product", () => `/v1/products/999/detail.json?apikey=${api.key}`, 404, "not_found"],
    ["a valid key, a bad affid", () => `${list}?apikey=${api.key}&affid=a%20b`, 400, "invalid_parameter"],
    ["a valid key, a bad callback", () => `${list}?apikey=${api.key}&callback=1x`, 400, "invalid_parameter"],
    ["a valid key, a bad search", () => `/v1/products?apikey=${api.key}&q=boots&rows=0`, 400, "invalid_parameter"],
    ["a valid key, a search", () => `/v1/products?apikey=${api.key}&q=boots`, 200, undefined],
    ["no key", () => list, 401, "api_key_missing"],
    ["a malformed key", () => `${list}?apikey=short`, 401, "api_key_invalid"],
    ["a key given twice", () => `${list}?apikey=${api.key}&apikey=${api.key}`, 401, "api_key_invalid"],
    ["a revoked key", () => `${list}?apikey=${revoked}`, 401, "api_key_invalid"],
    ["a replaced key in its grace period", () => `${list}?apikey=${rotated}`, 200, undefined],
    ["another version prefix", () => `/v2/sales/active.json?apikey=${api.key}`, 404, "not_found"],
  ])("%s", async (_, target, status, code) => {
    api.clock.now = T0 + 10;
    expect(await thrice(target())).toEqual([
      [status, code],
      [status, code],
      [status, code],
    ]);
  });

  it("a replaced key after its grace period: refused cold and remembered", async () => {
    api.clock.now = T0 + 10;
    const target = `${list}?apikey=${rotated}&x=grace`;
    expect((await get(target)).status).toBe(200);
    expect((await get(target)).status).toBe(200); // remembered now
    api.clock.now = T0 + 60;
    expect(await thrice(target)).toEqual([
      [401, "api_key_invalid"],
      [401, "api_key_invalid"],
      [401, "api_key_invalid"],
    ]);
  });

  it("the key's rate limit applies to a remembered target as to a cold one", async () => {
    api.clock.now = T0 + 100;
    const target = `${list}?apikey=${slow}`;
    expect((await get(target)).status).toBe(200); // the burst of one
    api.clock.now = T0 + 1100; // a token again (one every 1,000 s)
    expect((await get(target)).status).toBe(200); // remembered now
    expect((await get(target)).status).toBe(429); // remembered
    expect((await get(`${target}&x=cold`)).status).toBe(429); // cold
  });
});

describe("which targets are remembered", () => {
  it("a target at its second admission, not one asked for once (a new affid every request)", async () => {
    api.clock.now = T0 + 10;
    const before = api.handler.stats().admittedTargets;
    for (let i = 0; i < 20; i++) expect((await get(`${LIST}?apikey=${api.key}&affid=once${i}`)).status).toBe(200);
    expect(api.handler.stats().admittedTargets).toBe(before);
    const again = `${LIST}?apikey=${api.key}&affid=again`;
    expect((await get(again)).status).toBe(200);
    expect(api.handler.stats().admittedTargets).toBe(before);
    expect((await get(again)).status).toBe(200);
    expect(api.handler.stats().admittedTargets).toBe(before + 1);
    expect((await get(again)).status).toBe(200);
    expect(api.handler.stats().admittedTargets).toBe(before + 1);
  });
});

describe("failed keys per address (issue 27: a lockout never refuses a valid key)", () => {
  it("past the limit, unknown keys get the lockout's 401 while valid keys, cold and remembered, are served", async () => {
    api.clock.now = T0 + 1000;
    const valid = `${LIST}?apikey=${api.key}&x=lockout`;
    expect((await get(valid)).status).toBe(200);
    expect((await get(valid)).status).toBe(200); // remembered from here on
    for (let i = 0; i < 3; i++) expect((await get(`${LIST}?apikey=${"U".repeat(31)}${i}`)).status).toBe(401);
    const locked = await get(`${LIST}?apikey=${"U".repeat(32)}`);
    expect(locked.status).toBe(401);
    expect(locked.headers.get("retry-after")).toBe("1");
    expect(((await locked.json()) as { detail: string }).detail).toMatch(/too many failed API-key attempts/);
    expect((await get(valid)).status).toBe(200); // remembered
    expect((await get(`${valid}&cold=1`)).status).toBe(200); // cold
    // A missing key is no attempt: it is told so, locked out or not.
    expect(((await (await get(LIST)).json()) as { code: string }).code).toBe("api_key_missing");
    api.clock.now = T0 + 1001; // one attempt a second again
    expect(((await (await get(`${LIST}?apikey=${"V".repeat(32)}`)).json()) as { detail: string }).detail).toMatch(
      /unknown or revoked/,
    );
  });
});
