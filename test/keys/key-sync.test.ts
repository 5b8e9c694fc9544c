// Keys across machines: two `npm run serve` processes as on two machines, each with a keys file of its own and one
// real redis-server between them. A (KEYS_SYNC=publish) reads the source keys file, which the test changes as the
// portal and `npm run keys` do; B (KEYS_SYNC=follow) gets each change through Redis. 100 key changes are timed at
// both (one machine: the keys file; two servers: through the transport); suspension travels the same way; without
// Redis, B keeps serving the keys it had and says so in a log line and a metric, and catches up once Redis is back.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKey, revokeKey, renderKeysFile, hashKey } from "../../src/keys/keys-file.ts";
import { connectKeysRedis, digestOf, KEYS_CHANNEL, KEYS_DOC } from "../../src/keys/redis-keys.ts";
import { setAccountSuspended } from "../../src/portal/operator-keys.ts";
import { BASE, buildStandardSnapshot, freePort, spawnServe, tempDir } from "../helpers/fixture.ts";
import { percentile, startRedis, stopProcess, watchOutput } from "../helpers/processes.ts";
import type { Watched } from "../helpers/processes.ts";

const METRICS_TOKEN = "key-sync-metrics-token-0123";
/** The most a change may take to reach every server, ms (issue 22). */
const WITHIN_MS = 2_000;
const LIMITS = { rate: 1e6, burst: 1e6 }; // polled hard: never rate-limited

interface Server extends Watched {
  url: string;
}

describe("KEYS_SYNC: keys reach a server on another machine through Redis", () => {
  let root: string;
  let dataDir: string;
  let source: string;
  let redisPort: number;
  let redis: Watched | undefined;
  let a: Server;
  let b: Server;
  const servers: Watched[] = [];

  const startServer = async (
    keysFile: string,
    role: "publish" | "follow",
    port = redisPort,
    db = 0,
    more: Record<string, string> = {},
  ) => {
    const server = watchOutput(
      spawnServe(
        {
          DATA_DIR: dataDir,
          KEYS_FILE: keysFile,
          LOG_REQUESTS: "0",
          REDIS_URL: `redis://127.0.0.1:${port}${db ? `/${db}` : ""}`,
          KEYS_SYNC: role,
          METRICS_TOKEN,
          ...more,
        },
        ["ignore", "ignore", "pipe"],
      ),
      "stderr",
    );
    servers.push(server);
    const listening = await server.waitFor(/listening on http:\/\/127\.0\.0\.1:\d+/);
    return { ...server, url: listening.replace("listening on ", "") } satisfies Server;
  };
  const status = async (server: Server, key: string) => {
    const res = await fetch(`${server.url}/v1/sales/active.json?apikey=${key}`);
    await res.arrayBuffer();
    return res.status;
  };
  /** Asks `server` until `key` answers `expected`; the ms from `since` (performance.now()) until it did. */
  const until = async (server: Server, key: string, expected: number, since: number) => {
    for (;;) {
      const got = await status(server, key);
      const ms = performance.now() - since;
      if (got === expected) return ms;
      if (ms > WITHIN_MS) throw new Error(`${server.url}: ${key} still ${got} after ${WITHIN_MS} ms, not ${expected}`);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  };
  const gauge = async (server: Server, name: string) => {
    const res = await fetch(`${server.url}/metrics`, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } });
    return new RegExp(`^flash_sale_${name}\\{role="(?:publish|follow)"\\} (\\S+)$`, "m").exec(await res.text())?.[1];
  };

  beforeAll(async () => {
    root = await tempDir();
    dataDir = join(root, "data");
    await buildStandardSnapshot(root, dataDir);
    for (const m of ["a", "b", "c"]) await mkdir(join(root, m));
    source = join(root, "a", "keys.json");
    await createKey(source, "before", new Date(), LIMITS);
    redisPort = await freePort();
    redis = await startRedis(redisPort);
    a = await startServer(source, "publish");
    await a.waitFor(/serve: keys published through Redis at redis:\/\/127\.0\.0\.1:\d+ \(change 1\)/);
    b = await startServer(join(root, "b", "keys.json"), "follow");
    await b.waitFor(/serve: keys followed from Redis at redis:\/\/127\.0\.0\.1:\d+ \(change 1\)/);
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => stopProcess(s, "SIGKILL")));
    await stopProcess(redis, "SIGKILL");
  });

  it("carries 100 key changes (created: 200, revoked: 401) to both servers within 2 s each, and times them", async () => {
    const local: number[] = [];
    const remote: number[] = [];
    for (let i = 0; i < 50; i++) {
      let since = performance.now();
      const key = await createKey(source, `k${i}`, new Date(), LIMITS);
      let [ms1, ms2] = await Promise.all([until(a, key, 200, since), until(b, key, 200, since)]);
      local.push(ms1);
      remote.push(ms2);
      since = performance.now();
      await revokeKey(source, `k${i}`);
      [ms1, ms2] = await Promise.all([until(a, key, 401, since), until(b, key, 401, since)]);
      local.push(ms1);
      remote.push(ms2);
    }
    const line = (what: string, ms: number[]) =>
      `${what}: p50 ${percentile(ms, 50).toFixed(1)} ms, max ${Math.max(...ms).toFixed(1)} ms over ${ms.length} key changes`;
    console.log(`${line("one machine (the keys file)", local)}\n${line("two servers (through Redis)", remote)}`);
    expect(local).toHaveLength(100);
    expect(Math.max(...local, ...remote)).toBeLessThan(WITHIN_MS);
    expect(await gauge(b, "keys_synced")).toBe("1");
    expect(Number(await gauge(b, "keys_change"))).toBeGreaterThanOrEqual(101);
  }, 240_000);

  it("carries a suspended account's keys (401 at both) and its reinstatement (200 again)", async () => {
    const key = await createKey(source, "p.acct1.key1", new Date(), LIMITS);
    await Promise.all([until(a, key, 200, performance.now()), until(b, key, 200, performance.now())]);
    let since = performance.now();
    expect(await setAccountSuspended(source, "acct1", true, Date.now())).toBe(1);
    await Promise.all([until(a, key, 401, since), until(b, key, 401, since)]);
    since = performance.now();
    await setAccountSuspended(source, "acct1", false, Date.now());
    await Promise.all([until(a, key, 200, since), until(b, key, 200, since)]);
  });

  it("without Redis the follower keeps its keys, says so once in a log line and a metric, and catches up when Redis is back", async () => {
    const kept = await createKey(source, "kept", new Date(), LIMITS);
    await until(b, kept, 200, performance.now());
    const outageFrom = b.output().length; // what it said before (a start that raced A's first publish) is not this outage's
    await stopProcess(redis, "SIGKILL");
    await b.waitFor(/"level":"warn","event":"keys_source_unavailable"/);
    // Its own line, which may come in a later chunk of stderr than the warning: waited for, not read at once.
    await b.waitFor(/serving the keys \S+keys\.json holds \(change \d+, in step at 20\d\d-/);
    expect(await gauge(b, "keys_synced")).toBe("0");
    expect(await status(b, kept)).toBe(200);
    const meanwhile = await createKey(source, "meanwhile", new Date(), LIMITS);
    await until(a, meanwhile, 200, performance.now()); // the keys file's own machine has it at once
    expect(await status(b, meanwhile)).toBe(401); // no Redis: not here yet
    await a.waitFor(/"event":"keys_publish_failed"/);

    // Redis is back, empty: the publisher gives it the file again, and the follower takes it.
    redis = await startRedis(redisPort);
    const since = performance.now();
    await b.waitFor(/serve: keys followed from Redis/, 2);
    const caughtUp = await until(b, meanwhile, 200, since);
    expect(await status(b, kept)).toBe(200);
    expect(await gauge(b, "keys_synced")).toBe("1");
    // One report for the outage: from Redis's end to the line that says the follower is in step again. (Before it, a
    // start that raced A's first publish; after it, a command that timed out under load: outages of their own.)
    const back = b.output().slice(outageFrom).split("serve: keys followed from Redis")[0]!;
    expect(back.match(/"event":"keys_source_unavailable"/g)).toHaveLength(1);
    console.log(`after Redis came back, the follower caught up in ${caughtUp.toFixed(0)} ms`);
  }, 60_000);

  it("npm run portal publishes the keys file it writes (KEYS_SYNC=publish), and refuses to follow", async () => {
    const file = join(root, "d", "keys.json");
    await mkdir(join(root, "d"));
    const env = {
      ...process.env,
      DATA_DIR: join(root, "d"),
      KEYS_FILE: file,
      PORTAL_PORT: "0",
      BASE_URL: BASE, // not vitest's own
      REDIS_URL: `redis://127.0.0.1:${redisPort}/1`, // a database of its own: A publishes to 0
    };
    const start = (role: string) =>
      watchOutput(
        spawn(process.execPath, ["--import", "tsx", "src/cli/portal.ts"], {
          env: { ...env, KEYS_SYNC: role },
          stdio: ["ignore", "ignore", "pipe"],
        }),
        "stderr",
      );
    const refused = start("follow");
    servers.push(refused);
    await once(refused.child, "exit");
    expect(refused.output()).toMatch(/KEYS_SYNC=follow: the portal writes the keys/);
    const key = await createKey(file, "from-the-portal-machine", new Date(), LIMITS);
    const portal = start("publish");
    servers.push(portal);
    await portal.waitFor(/portal: keys published through Redis at redis:\/\/127\.0\.0\.1:\d+\/1 \(change 1\)/);
    const d = await startServer(join(root, "c", "d-keys.json"), "follow", redisPort, 1);
    await until(d, key, 200, performance.now());
  });

  it("under WORKERS=2 each worker follows: a new key and a revocation reach both", async () => {
    const w = await startServer(join(root, "c", "w-keys.json"), "follow", redisPort, 0, { WORKERS: "2" });
    await w.waitFor(/serve: keys followed from Redis/, 2); // one line a worker
    // Four requests at once go to both workers (round robin). Each worker follows on its own, so one may answer
    // before the other: every one must within WITHIN_MS.
    const answers = async (key: string) => Promise.all([1, 2, 3, 4].map(() => status(w, key)));
    const everyWorker = async (key: string, expected: number) => {
      const since = performance.now();
      for (let got = await answers(key); got.some((s) => s !== expected); got = await answers(key)) {
        if (performance.now() - since > WITHIN_MS) throw new Error(`after ${WITHIN_MS} ms: ${got.join(", ")}`);
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    };
    const key = await createKey(source, "for-workers", new Date(), LIMITS);
    await everyWorker(key, 200);
    expect(await answers(key)).toEqual([200, 200, 200, 200]);
    await revokeKey(source, "for-workers");
    await everyWorker(key, 401);
    expect(await answers(key)).toEqual([401, 401, 401, 401]);
  });

  it("says once when Redis's keys go back to an older change (a Redis restored from a backup), and applies them", async () => {
    const writer = connectKeysRedis(`redis://127.0.0.1:${redisPort}/3`, "test-writer");
    try {
      await once(writer, "ready");
      // A key valid in the older copy, revoked in the newer.
      const key = "E".repeat(32);
      const created = new Date().toISOString();
      const older = renderKeysFile({ format: 2, keys: [{ name: "e", hash: hashKey(key), created }] });
      const newer = renderKeysFile({ format: 2, keys: [] });
      expect(await writer.publishKeys(KEYS_DOC, KEYS_CHANNEL, digestOf(older), older)).toBe(1);
      expect(await writer.publishKeys(KEYS_DOC, KEYS_CHANNEL, digestOf(newer), newer)).toBe(2);
      const e = await startServer(join(root, "c", "e-keys.json"), "follow", redisPort, 3);
      // In step with change 2 (a 401 alone does not say so: a new follower has no keys until then).
      await e.waitFor(/keys followed from Redis at \S+ \(change 2\)/);
      await until(e, key, 401, performance.now());
      // The backup: the older copy under its own change number.
      await writer.hset(KEYS_DOC, { change: "1", digest: digestOf(older), text: older });
      await writer.publish(KEYS_CHANNEL, "1");
      await until(e, key, 200, performance.now());
      await e.waitFor(/"event":"keys_change_backwards".*at change 1, below the change 2 this machine had/);
      expect(e.output().match(/keys_change_backwards/g)).toHaveLength(1);
    } finally {
      writer.disconnect();
    }
  });

  it("a follower whose Redis is not there starts anyway, serving the keys file it has", async () => {
    const file = join(root, "c", "keys.json");
    const key = "C".repeat(32);
    const created = new Date().toISOString();
    await writeFile(file, renderKeysFile({ format: 2, keys: [{ name: "c", hash: hashKey(key), created }] }));
    const c = await startServer(file, "follow", await freePort());
    await c.waitFor(/"event":"keys_source_unavailable".*serving the keys \S+ holds \(none from Redis yet\)/);
    expect(await status(c, key)).toBe(200);
    expect(await gauge(c, "keys_synced")).toBe("0");
  });
});
