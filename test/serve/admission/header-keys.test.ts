// The key in a header (issue 35, item 3): `X-Api-Key` and `Authorization: Bearer` as well as `apikey`, each cold and
// remembered; two different keys a 400; a header-keyed response marked so that no shared cache hands it to a request
// without the key; the CORS preflight; no key in a log line; a front's check takes header keys only from its query.
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKey } from "../../../src/keys/keys-file.ts";
import type { RequestLog } from "../../../src/serve/handler.ts";
import { startTestApi, T0 } from "../../helpers/fixture.ts";
import type { TestApi } from "../../helpers/fixture.ts";

let api: TestApi;
let other: string;
const logged: RequestLog[] = [];
beforeAll(async () => {
  api = await startTestApi(undefined, { log: (line) => logged.push(line), trustProxy: ["127.0.0.1"] });
  other = await createKey(api.keysFile, "other", new Date(T0 * 1000), { rate: 1e9, burst: 1e9 });
  await api.handler.reload();
});
afterAll(() => api.close());

const LIST = "/v1/sales/active.json";
const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });
const xApiKey = (key: string) => ({ "X-Api-Key": key });

/** The status, problem code and the headers a cache reads of a GET of `target` with `headers`. */
async function ask(target: string, headers: Record<string, string> = {}) {
  const res = await api.get(target, { headers });
  const body = (await res.json()) as { code?: string; detail?: string };
  return {
    status: res.status,
    code: body.code,
    detail: body.detail,
    etag: res.headers.get("etag"),
  };
}

describe("the key in a header", () => {
  it.each([
    ["X-Api-Key", () => xApiKey(api.key)],
    ["Authorization: Bearer", () => bearer(api.key)],
    ["Authorization: bEaReR with spaces", () => ({ Authorization: `bEaReR   ${api.key} ` })],
    ["both headers, the same key", () => ({ ...xApiKey(api.key), ...bearer(api.key) })],
  ])("%s is served as the query's key, cold and remembered", async (_, headers) => {
    api.clock.now = T0 + 10;
    const byQuery = await ask(`${LIST}?apikey=${api.key}`);
    expect(byQuery.status).toBe(200);
    for (let i = 0; i < 3; i++) {
      // the second is remembered, the third answered from memory
      const got = await ask(LIST, headers());
      expect([got.status, got.etag]).toEqual([200, byQuery.etag]);
    }
  });

  it("marks every keyed answer a cache may keep as varying with the key's headers, whichever way the key came", async () => {
    api.clock.now = T0 + 10;
    const ended = "/v1/sales/kids/rainy/detail.json"; // a sale that has ended: a 404 a cache may keep
    for (const [target, headers] of [
      [`${LIST}?apikey=${api.key}`, {}],
      [LIST, xApiKey(api.key)],
      [`${ended}?apikey=${api.key}`, {}],
      [ended, bearer(api.key)],
      [`/v1/sales/upcoming.ics?apikey=${api.key}`, {}],
    ] as const) {
      const res = await api.get(target, { headers });
      expect([target, res.headers.get("cache-control")]).toEqual([target, expect.stringMatching(/^public/)]);
      expect(res.headers.get("vary")).toMatch(/Authorization, X-Api-Key$/);
      expect(res.headers.get("access-control-expose-headers")).toBe("*");
      await res.arrayBuffer();
    }
    // A document needs no key, and does not vary with one.
    const doc = await api.get("/v1/openapi.json");
    expect(doc.headers.get("vary")).toBe("Accept-Encoding");
  });

  it("takes the same key in the query and a header; two different keys are a 400, cold and remembered", async () => {
    api.clock.now = T0 + 10;
    expect((await ask(`${LIST}?apikey=${api.key}`, xApiKey(api.key))).status).toBe(200);
    for (const [target, headers] of [
      [`${LIST}?apikey=${api.key}`, xApiKey(other)],
      [`${LIST}?apikey=${other}`, bearer(api.key)],
      [LIST, { ...xApiKey(api.key), ...bearer(other) }],
    ] as const)
      for (let i = 0; i < 2; i++) expect((await ask(target, headers)).code).toBe("invalid_request");
  });

  it("never answers a target remembered for one header's key to a request with another key or none", async () => {
    api.clock.now = T0 + 10;
    const target = `${LIST}?affid=remembered`;
    expect((await ask(target, xApiKey(api.key))).status).toBe(200);
    expect((await ask(target, xApiKey(api.key))).status).toBe(200); // remembered now
    expect(await ask(target)).toMatchObject({ status: 401, code: "api_key_missing" });
    expect(await ask(target, xApiKey("Z".repeat(32)))).toMatchObject({ status: 401, code: "api_key_invalid" });
    expect(await ask(target, bearer("short"))).toMatchObject({ status: 401, code: "api_key_invalid" });
    logged.length = 0;
    expect((await ask(target, bearer(other))).status).toBe(200);
    expect(logged.map((l) => l.key)).toEqual(["other"]);
  });

  it("answers a missing key naming the three ways, and an Authorization of another scheme for what it is", async () => {
    expect(await ask(LIST)).toMatchObject({
      status: 401,
      code: "api_key_missing",
      detail:
        "this request needs an API key: the apikey query parameter, an X-Api-Key header or Authorization: Bearer <key>",
    });
    const basic = { Authorization: "Basic dXNlcjpwYXNz" };
    expect(await ask(LIST, basic)).toMatchObject({ status: 401, code: "api_key_missing" });
    expect((await ask(LIST, basic)).detail).toMatch(/Authorization header carries no API key/);
    // Beside a key given another way (a proxy's Basic credentials, say), it is not a key at all.
    expect((await ask(`${LIST}?apikey=${api.key}`, basic)).status).toBe(200);
    expect((await ask(LIST, { ...basic, ...xApiKey(api.key) })).status).toBe(200);
  });

  it("lets a page's script read every header of a refusal too (Retry-After, RateLimit-*)", async () => {
    const res = await api.get(LIST, { headers: xApiKey("Z".repeat(32)) });
    expect([res.status, res.headers.get("access-control-expose-headers")]).toEqual([401, "*"]);
    await res.arrayBuffer();
  });

  it("refuses X-Api-Key given twice, which node joins into one value", async () => {
    const raw = await rawGet(`X-Api-Key: ${api.key}\r\nX-Api-Key: ${api.key}\r\n`);
    expect(raw).toMatch(/^HTTP\/1.1 401 /);
    expect(raw).toContain('"detail":"X-Api-Key must be given exactly once"');
  });

  it("writes no key into a log line, whichever way it came", async () => {
    logged.length = 0;
    await ask(LIST, xApiKey(api.key));
    await ask(LIST, bearer(api.key));
    await ask(LIST, xApiKey("Y".repeat(32)));
    expect(logged).toHaveLength(3);
    expect(JSON.stringify(logged)).not.toContain(api.key);
    expect(JSON.stringify(logged)).not.toContain("Y".repeat(32));
  });
});

describe("CORS", () => {
  it("answers a preflight for the key's headers, on any path, without a key", async () => {
    for (const target of [LIST, "/v1/products?q=boots", "/nowhere"]) {
      const res = await fetch(api.url + target, {
        method: "OPTIONS",
        headers: {
          Origin: "https://partner.example",
          "Access-Control-Request-Method": "GET",
          "Access-Control-Request-Headers": "x-api-key",
        },
      });
      expect(res.status).toBe(204);
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      expect(res.headers.get("access-control-allow-methods")).toBe("GET, HEAD");
      expect(res.headers.get("access-control-allow-headers")).toBe("Authorization, X-Api-Key, If-None-Match");
      expect(res.headers.get("access-control-max-age")).toBe("86400");
    }
  });

  it("keeps a plain OPTIONS a 405", async () => {
    const res = await fetch(api.url + LIST, { method: "OPTIONS" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, HEAD");
  });
});

describe("a front's key check", () => {
  const check = (query: string, headers: Record<string, string> = {}) =>
    fetch(`${api.url}/edge/key${query}`, { headers }).then((r) => r.status);

  it("takes a header's key from the check's query, as the fronts send it", async () => {
    expect(await check(`?x_api_key=${api.key}`)).toBe(204);
    expect(await check(`?authorization=Bearer%20${api.key}`)).toBe(204);
    expect(await check(`?apikey=${api.key}&x_api_key=${other}`)).toBe(400);
  });

  it("does not read the check's own headers: a front that does not pass them on is refused, never allowed", async () => {
    expect(await check("", xApiKey(api.key))).toBe(401);
    expect(await check("", bearer(api.key))).toBe(401);
  });
});

/** A GET of the list with `headerLines` as sent (fetch cannot repeat a header); the raw answer. */
function rawGet(headerLines: string): Promise<string> {
  const { port } = new URL(api.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), "127.0.0.1", () =>
      socket.write(`GET ${LIST} HTTP/1.1\r\nHost: test\r\n${headerLines}Connection: close\r\n\r\n`),
    );
    let text = "";
    socket.setEncoding("utf8").on("data", (s: string) => (text += s));
    socket.on("end", () => resolve(text));
    socket.on("error", reject);
  });
}
