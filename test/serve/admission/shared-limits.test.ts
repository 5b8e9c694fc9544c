// REDIS_URL: two server processes (as on two machines) share a key's rate limit and an address's failed-key limit
// through a real redis-server; when Redis stops they keep serving with per-process limits (logged once), and they
// share again once it is back.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKey } from "../../../src/keys/keys-file.ts";
import { REDIS_TIMEOUT_MS } from "../../../src/serve/admission/shared-limits.ts";
import { startRedis, stopProcess, watchOutput } from "../../helpers/processes.ts";
import type { Watched } from "../../helpers/processes.ts";
import { buildStandardSnapshot, freePort, spawnServe, tempDir } from "../../helpers/fixture.ts";

const METRICS_TOKEN = "shared-limits-metrics-token";

describe("REDIS_URL: limits shared by two servers", () => {
  let root: string;
  let dataDir: string;
  let keysFile: string;
  let redisPort: number;
  let redis: Watched | undefined;
  const servers: Watched[] = [];

  beforeAll(async () => {
    root = await tempDir();
    dataDir = join(root, "data");
    keysFile = join(root, "keys.json");
    await buildStandardSnapshot(root, dataDir);
    redisPort = await freePort();
    redis = await startRedis(redisPort);
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => stopProcess(s, "SIGKILL")));
    await stopProcess(redis, "SIGKILL");
  });

  /** A server using the Redis on `port` (default: the test's); it has said so unless `shared` is false. */
  const startServer = async (port = redisPort, shared = true): Promise<Watched & { url: string }> => {
    const server = watchOutput(
      spawnServe(
        {
          DATA_DIR: dataDir,
          KEYS_FILE: keysFile,
          LOG_REQUESTS: "0",
          REDIS_URL: `redis://127.0.0.1:${port}`,
          METRICS_TOKEN,
        },
        ["ignore", "ignore", "pipe"],
      ),
      "stderr",
    );
    servers.push(server);
    const listening = await server.waitFor(/listening on http:\/\/127\.0\.0\.1:\d+/);
    if (shared) await server.waitFor(/rate limits shared through Redis at redis:\/\/127\.0\.0\.1:\d+/);
    return { ...server, url: listening.replace("listening on ", "") };
  };

  /** The value of flash_sale_rate_limits_shared in the server's /metrics. */
  const sharedGauge = async (url: string) => {
    const res = await fetch(`${url}/metrics`, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } });
    return /^flash_sale_rate_limits_shared (\d)$/m.exec(await res.text())?.[1];
  };

  /** Sends `n` requests in turn to each server (one at a time): how many were answered with each status. */
  const alternate = async (urls: string[], path: string, n: number) => {
    const statuses: Record<number, number> = {};
    const retryAfter: string[] = [];
    for (let i = 0; i < n; i++) {
      const res = await fetch(urls[i % urls.length] + path);
      await res.arrayBuffer();
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      if (res.status === 429) retryAfter.push(res.headers.get("retry-after") ?? "none");
    }
    return { statuses, retryAfter };
  };

  /**
   * Sends rounds of 10 requests, alternating between the servers, until a round gets no 200 (at most 30 rounds):
   * the key's bucket, shared or not, is then empty, and no server holds tokens it reserved. (A reply from Redis that
   * comes late only moves grants to a later round, so a slow machine does not change the count.)
   */
  const untilRefused = async (urls: string[], path: string) => {
    const total = { statuses: {} as Record<number, number>, retryAfter: [] as string[] };
    for (let round = 0; round < 30; round++) {
      const { statuses, retryAfter } = await alternate(urls, path, 10);
      for (const [status, n] of Object.entries(statuses)) total.statuses[+status] = (total.statuses[+status] ?? 0) + n;
      total.retryAfter.push(...retryAfter);
      if (!statuses[200]) break;
    }
    return total;
  };

  it("a key's burst is shared: two servers grant it about once, not twice; Redis down: served with per-process limits, logged once; back: shared again", async () => {
    // Rate 0.01 a second: the bucket does not refill noticeably during the test; burst 10.
    const key = await createKey(keysFile, "shared", new Date(), { rate: 0.01, burst: 10 });
    const [a, b] = [await startServer(), await startServer()];
    const path = `/v1/sales/active.json?apikey=${key}`;

    expect(await sharedGauge(a.url)).toBe("1");
    const first = await untilRefused([a.url, b.url], path);
    // 10 tokens in Redis, plus at most one request per server granted before its reservation came back.
    expect(first.statuses[200]).toBeGreaterThanOrEqual(10);
    expect(first.statuses[200]).toBeLessThanOrEqual(12);
    expect(Object.keys(first.statuses).sort()).toEqual(["200", "429"]);
    expect(first.retryAfter.every((s) => Number(s) >= 1)).toBe(true);

    // Redis stops: every request is still answered, from each server's own buckets (full: they were never used).
    await stopProcess(redis, "SIGKILL");
    await Promise.all([a.waitFor(/"event":"redis_unavailable"/), b.waitFor(/"event":"redis_unavailable"/)]);
    expect(await sharedGauge(a.url)).toBe("0");
    const down = await untilRefused([a.url, b.url], path);
    expect(Object.keys(down.statuses).sort()).toEqual(["200", "429"]);
    expect(down.statuses[200]).toBe(20);
    // Logged once per server for the whole outage, however many reconnections failed meanwhile.
    for (const s of [a, b]) expect(s.output().match(/"event":"redis_unavailable"/g)).toHaveLength(1);
    expect(a.output()).toMatch(/"level":"warn".*cannot be reached.*rate limits are per process until it answers again/);

    // Redis is back (empty: a fresh bucket of 10): both servers reconnect by themselves and share again.
    redis = await startRedis(redisPort);
    await Promise.all([
      a.waitFor(/rate limits shared through Redis/, 2),
      b.waitFor(/rate limits shared through Redis/, 2),
    ]);
    expect(await sharedGauge(a.url)).toBe("1");
    const again = await untilRefused([a.url, b.url], path);
    expect(again.statuses[200]).toBeGreaterThanOrEqual(10);
    expect(again.statuses[200]).toBeLessThanOrEqual(12);
  }, 60_000);

  it("failed keys from one address are counted across both servers: 8 to each lock it out of both (10 a server alone); valid keys are still served", async () => {
    const good = await createKey(keysFile, "lockout", new Date()); // made before the servers start: both know it
    const [a, b] = [await startServer(), await startServer()];
    // 16 wrong keys, alternating: 8 to each server, which alone would allow 10 before locking the address out.
    const wrong = await alternate([a.url, b.url], `/v1/sales/active.json?apikey=${"x".repeat(32)}`, 16);
    expect(wrong.statuses[401]).toBe(16);
    // Now a further wrong key is refused by both servers as locked out, once each has Redis's answer to its last
    // failure: 50 requests with the valid key (which count nothing, and are served: issue 27, one guesser behind a NAT
    // or proxy must not lock out everyone else there) give it time, then one wrong key probes; a slow machine gets a
    // second round. Alone, a server has 8 failures: its 9th and 10th attempts are within its burst of 10, so neither
    // probe would be refused as locked out without the shared count.
    for (const url of [a.url, b.url]) {
      let detail = "";
      let res: Response | null = null;
      for (let round = 0; round < 2 && !/too many failed API-key/.test(detail); round++) {
        for (let i = 0; i < 50; i++) {
          const served = await fetch(`${url}/v1/sales/active.json?apikey=${good}`);
          await served.arrayBuffer();
          expect(served.status).toBe(200);
        }
        res = await fetch(`${url}/v1/sales/active.json?apikey=${"y".repeat(32)}`);
        detail = ((await res.json()) as { detail: string }).detail;
      }
      expect(res!.status).toBe(401);
      expect(detail).toMatch(/too many failed API-key/);
      expect(res!.headers.get("retry-after")).toMatch(/^[1-9][0-9]*$/);
    }
  }, 60_000);

  it("a server whose Redis is not there starts anyway, with per-process limits, and says so once", async () => {
    const key = await createKey(keysFile, "no-redis", new Date(), { rate: 0.01, burst: 3 });
    const server = await startServer(await freePort(), false);
    await server.waitFor(/"event":"redis_unavailable"/);
    const { statuses } = await alternate([server.url], `/v1/sales/active.json?apikey=${key}`, 5);
    expect(statuses).toEqual({ 200: 3, 429: 2 });
    expect(server.output().match(/"event":"redis_unavailable"/g)).toHaveLength(1);
  }, 60_000);

  it("a Redis that hangs (stopped, not closed) delays no request: after a timeout the limits are per process", async () => {
    const port = await freePort();
    const hung = await startRedis(port);
    try {
      const key = await createKey(keysFile, "hung", new Date()); // the default limit: 50 a second, bursts of 200
      const server = await startServer(port);
      hung.child.kill("SIGSTOP");
      const path = `${server.url}/v1/sales/active.json?apikey=${key}`;
      const statuses: number[] = [];
      for (let i = 0; i < 40; i++) {
        const started = performance.now();
        const res = await fetch(path);
        await res.arrayBuffer();
        statuses.push(res.status);
        expect(performance.now() - started).toBeLessThan(REDIS_TIMEOUT_MS);
      }
      // The first 5 (a batch) granted ahead of the reservation; until it times out the key is refused (429, never
      // an error); after that the server's own bucket grants them.
      expect(statuses.slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
      expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
      await server.waitFor(/"event":"redis_unavailable".*Command timed out/);
      const after = await alternate([server.url], `/v1/sales/active.json?apikey=${key}`, 20);
      expect(after.statuses).toEqual({ 200: 20 });
    } finally {
      hung.child.kill("SIGCONT");
      await stopProcess(hung, "SIGKILL");
    }
  }, 60_000);
});
