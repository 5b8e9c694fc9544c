// Key changes pushed to the shipped fronts (issue 37): a real nginx (purges) and a real varnishd (bans) in front of a
// server whose checks they hold for an hour (EDGE_KEY_HOLD) while its pushes reach them. EDGE_KEY_TTL is 0 here, so
// a check not held for the hour is asked again on the next request: what the origin counts shows which hold applied.
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_KEY_RATE_LIMIT } from "../../src/config/defaults.ts";
import type { Front } from "../../src/edge/front.ts";
import type { PushedFront } from "../../src/edge/fronts.ts";
import { addEdgeMetrics } from "../../src/edge/metrics.ts";
import { createNginxFront } from "../../src/edge/nginx.ts";
import { createEdgePusher } from "../../src/edge/pusher.ts";
import type { EdgeEvent, EdgePusher } from "../../src/edge/pusher.ts";
import { createVarnishFront } from "../../src/edge/varnish.ts";
import { createKey, revokeKey, rotateKey, setKeyLimits } from "../../src/keys/keys-file.ts";
import { setAccountSuspended } from "../../src/portal/operator-keys.ts";
import { createReloader } from "../../src/serve/http/reloader.ts";
import type { Reloader } from "../../src/serve/http/reloader.ts";
import { send } from "../helpers/edge-contract.ts";
import { freePort, startTestApi, tempDir } from "../helpers/fixture.ts";
import type { TestApi } from "../helpers/fixture.ts";
import { startNginx } from "../helpers/fronts.ts";
import { startVarnish } from "../helpers/varnish.ts";

const VCL = fileURLToPath(new URL("../../deploy/varnish/default.vcl", import.meta.url));
const PATH = "/v1/products/categories.json";
const METRICS_TOKEN = "edge-push-metrics-token";

/** Each shipped front: how the tests start it (again at the same place: `at`) and the push that reaches it. */
const FRONTS: {
  name: string;
  start: (upstream: number, at: { dir: string; port: number }) => Promise<{ url: string; stop(): Promise<void> }>;
  make: (name: string, url: string) => PushedFront & Front;
}[] = [
  { name: "nginx", start: (upstream, at) => startNginx(upstream, undefined, at), make: createNginxFront },
  { name: "varnish", start: (upstream, at) => startVarnish(VCL, upstream, at), make: createVarnishFront },
];

/** Polls `f` every 10 ms until it is true; returns the ms it took (fails after `limitMs`). */
async function until(f: () => Promise<boolean> | boolean, limitMs = 10_000): Promise<number> {
  const start = performance.now();
  while (!(await f())) {
    if (performance.now() - start > limitMs) throw new Error(`not so within ${limitMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
  return Math.round(performance.now() - start);
}

/** What the figures of the report are gathered in. */
const timings: string[] = [];
afterAll(() => console.log(`edge push timings:\n${timings.join("\n")}`));

describe.each(FRONTS)("$name: checks held an hour, key changes pushed", ({ name, start, make }) => {
  let api: TestApi;
  let reloader: Reloader;
  let pusher: EdgePusher;
  let front: { url: string; stop(): Promise<void> };
  let at: { dir: string; port: number };
  const events: EdgeEvent[] = [];
  let checks = 0;
  const inStep = () => pusher.status()[0]!.inStep;
  const get = (key: string, how: "query" | "x-api-key" | "bearer" = "query") =>
    send(front.url, how === "query" ? `${PATH}?apikey=${key}` : PATH, {
      headers: how === "x-api-key" ? { "X-Api-Key": key } : how === "bearer" ? { Authorization: `Bearer ${key}` } : {},
    });
  /** Ms until `key` (sent `how`) is refused with a 401 at the front. */
  const refusedIn = (key: string, how?: "query" | "x-api-key" | "bearer") =>
    until(async () => (await get(key, how)).status === 401);

  beforeAll(async () => {
    at = { dir: await tempDir(`fsa-push-${name}-`), port: await freePort() };
    pusher = createEdgePusher({
      fronts: [make(name, `http://127.0.0.1:${at.port}`)],
      keyLimit: DEFAULT_KEY_RATE_LIMIT,
      clock: Date.now,
      onEvent: (e) => events.push(e),
    });
    api = await startTestApi(undefined, {
      clock: Date.now,
      trustProxy: ["127.0.0.1"],
      edge: pusher,
      edgeKeyHold: 3600,
      edgeKeyTtl: 0,
      metricsToken: METRICS_TOKEN,
      log: (entry) => void (entry.path === "/edge/key" && checks++),
    });
    addEdgeMetrics(api.handler.metrics, () => pusher.status());
    reloader = createReloader(api.handler, api.dataDir, api.keysFile, { watchKeys: true });
    // The pusher told the front of the keys before it was there: out of step until a retried resync reaches it.
    expect(inStep()).toBe(false);
    front = await start(Number(new URL(api.url).port), at);
    await until(inStep);
  }, 60_000);

  afterAll(async () => {
    reloader?.stop();
    await pusher?.close();
    await front?.stop();
    await api?.close();
  });

  /**
   * A new key, its check held at the front (sent each way in `ways`) once its pushes are done: the origin asked no more
   * after the first.
   */
  async function heldKey(keyName: string, ways: ("query" | "x-api-key" | "bearer")[] = ["query"]) {
    const key = await createKey(api.keysFile, keyName, new Date(), { rate: 1e9, burst: 1e9 });
    await reloader.check();
    // The new key is pushed, and again a second later (which would purge a check held before it: one more check).
    await pusher.idle();
    for (const how of ways) expect((await get(key, how)).status).toBe(200);
    const before = checks;
    for (let i = 0; i < 20; i++) for (const how of ways) expect((await get(key, how)).status).toBe(200);
    expect(checks - before).toBe(0);
    return key;
  }

  it("answers a front in step with the hold and the key's hash; an unnamed asker and an unknown key with the TTL", async () => {
    const key = await heldKey("plain");
    const ask = (k: string, front?: string) =>
      send(api.url, `/edge/key?apikey=${k}`, front ? { headers: { "X-Edge-Front": front } } : {});
    const named = await ask(key, name);
    expect([named.status, named.headers["cache-control"]]).toEqual([204, "public, max-age=3600"]);
    expect(named.headers["x-key-hash"]).toMatch(/^[0-9a-f]{64}$/);
    expect((await ask(key)).headers["cache-control"]).toBe("public, max-age=0");
    expect((await ask(key, "elsewhere")).headers["cache-control"]).toBe("public, max-age=0");
    const unknown = await ask("U".repeat(32), name);
    expect([unknown.status, unknown.headers["cache-control"]]).toEqual([401, "public, max-age=0"]);
    // The hash is the cache's own: a refusal through the front does not show it.
    expect((await get("U".repeat(32))).headers["x-key-hash"]).toBeUndefined();
  });

  it("refuses a revoked key within 2 s, sent in the query, X-Api-Key or Authorization: Bearer", async () => {
    const key = await heldKey("revoked", ["query", "x-api-key", "bearer"]);
    const revoked = performance.now();
    await revokeKey(api.keysFile, "revoked");
    const ms = await refusedIn(key);
    const total = Math.round(performance.now() - revoked);
    for (const how of ["x-api-key", "bearer"] as const) expect((await get(key, how)).status).toBe(401);
    timings.push(`${name}: revoked key refused ${total} ms after the revocation`);
    expect([ms, total].every((t) => t < 2000)).toBe(true);
    // The refusal of a known key is held too: no more checks.
    const before = checks;
    for (let i = 0; i < 10; i++) expect((await get(key)).status).toBe(401);
    expect(checks - before).toBe(0);
  });

  it("applies a changed limit, ends a rotated key's grace and refuses a suspended account's key within 2 s", async () => {
    const limited = await createKey(api.keysFile, "limited-2", new Date(), { rate: 1e9, burst: 1e9 });
    await reloader.check();
    // In a row (at once, nginx's requests that wait for one check wake every 500 ms): the bucket is 1 s at most.
    const burst = async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 12; i++) statuses.push((await get(limited)).status);
      return statuses;
    };
    expect(await burst()).not.toContain(429);
    const changed = performance.now();
    await setKeyLimits(api.keysFile, "limited-2", { rate: 1, burst: 2 });
    await until(async () => (await burst()).includes(429));
    timings.push(`${name}: new limit applied ${Math.round(performance.now() - changed)} ms after the change`);
    expect(performance.now() - changed).toBeLessThan(2000);

    const old = await heldKey("rotated");
    const graceEnds = performance.now() + 1500; // rotateKey counts from its own, later, clock reading
    await rotateKey(api.keysFile, "rotated", 1500);
    await reloader.check();
    expect((await get(old)).status).toBe(200);
    await refusedIn(old);
    timings.push(`${name}: replaced key refused ${Math.round(performance.now() - graceEnds)} ms after its grace ended`);
    expect(performance.now() - graceEnds).toBeLessThan(2000);

    const suspendedKey = await heldKey("p.acct1.k");
    const suspended = performance.now();
    await setAccountSuspended(api.keysFile, "acct1", true, Date.now());
    await refusedIn(suspendedKey);
    timings.push(`${name}: suspended account's key refused ${Math.round(performance.now() - suspended)} ms after`);
    expect(performance.now() - suspended).toBeLessThan(2000);
    expect(JSON.parse((await get(suspendedKey)).body.toString()).code).toBe("api_key_suspended");
  });

  it("falls back to the short hold while the front misses a push, says so, and is in step again after a resync", async () => {
    const key = await heldKey("missed", ["query", "bearer"]);
    const other = await heldKey("bystander");
    await front.stop();
    await revokeKey(api.keysFile, "missed");
    await reloader.check();
    await until(() => !inStep());
    expect(events.filter((e) => e.event === "edge_front_out_of_step").at(-1)).toMatchObject({ front: name });
    const metrics = async () =>
      (await fetch(`${api.url}/metrics`, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } })).text();
    expect(await metrics()).toContain(`flash_sale_edge_front_in_step{front="${name}"} 0`);
    expect(await metrics()).toMatch(
      new RegExp(`flash_sale_edge_pushes_total\\{front="${name}",result="failed"\\} [1-9]`),
    );
    const restarted = performance.now();
    front = await start(Number(new URL(api.url).port), at);
    const up = performance.now();
    for (const how of ["query", "bearer"] as const) await refusedIn(key, how);
    timings.push(
      `${name}: revoked while it was down, refused ${Math.round(performance.now() - up)} ms after it answered again (${Math.round(up - restarted)} ms to start)`,
    );
    expect(performance.now() - up).toBeLessThan(2000 + 2000);
    await until(inStep);
    expect(await metrics()).toContain(`flash_sale_edge_front_in_step{front="${name}"} 1`);
    // In step again: a check is held for the hour once more.
    expect((await get(other)).status).toBe(200);
    const before = checks;
    for (let i = 0; i < 10; i++) expect((await get(other)).status).toBe(200);
    expect(checks - before).toBe(0);
  });
});
