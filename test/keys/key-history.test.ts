// Issue 32's scenario with KEYS_SYNC=shared, on two machines (each an `npm run serve` with a keys file of its own, and
// the test writing as a portal of that machine would) and one real redis-server: a key made while both run, revoked on
// A while B is down; A goes down, Redis loses its data, B comes back and is given... its copy, where the key is live,
// and a new key is made on B: both copies are "change 2". A, back, must not take B's keys (the revoked key would be
// valid again): it refuses them, says so in a log line and a metric, and gives Redis its revocation, which B takes.
import { once } from "node:events";
import { mkdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startKeySync } from "../../src/keys/key-sync.ts";
import { createKey, revokeKey } from "../../src/keys/keys-file.ts";
import { changeFileOf, routeKeysChanges } from "../../src/keys/keys-store.ts";
import { connectKeysRedis, KEYS_DOC } from "../../src/keys/redis-keys.ts";
import { buildStandardSnapshot, freePort, spawnServe, tempDir } from "../helpers/fixture.ts";
import { startRedis, stopProcess, watchOutput } from "../helpers/processes.ts";
import type { Watched } from "../helpers/processes.ts";

const METRICS_TOKEN = "key-history-metrics-token";
/** The most a change may take to reach a server, ms (issue 22). */
const WITHIN_MS = 2_000;
const LIMITS = { rate: 1e6, burst: 1e6 }; // polled hard: never rate-limited

interface Server extends Watched {
  url: string;
}

describe("KEYS_SYNC=shared: a Redis that lost its data never brings a revoked key back", () => {
  let root: string;
  let dataDir: string;
  let redisPort: number;
  let redis: Watched | undefined;
  const children: Watched[] = [];
  const redisUrl = () => `redis://127.0.0.1:${redisPort}`;
  const keysFileOf = (machine: string) => join(root, machine, "keys.json");

  const startServer = async (machine: string) => {
    const server = watchOutput(
      spawnServe(
        {
          DATA_DIR: dataDir,
          KEYS_FILE: keysFileOf(machine),
          LOG_REQUESTS: "0",
          REDIS_URL: redisUrl(),
          KEYS_SYNC: "shared",
          METRICS_TOKEN,
        },
        ["ignore", "ignore", "pipe"],
      ),
      "stderr",
    );
    children.push(server);
    const listening = await server.waitFor(/listening on http:\/\/127\.0\.0\.1:\d+/);
    return { ...server, url: listening.replace("listening on ", "") } satisfies Server;
  };
  /** Runs `work` as a writer of `machine` would (a portal there, `npm run keys`): its changes go to Redis. */
  const onMachine = async <T>(machine: string, work: (keysFile: string) => Promise<T>) => {
    const keysFile = keysFileOf(machine);
    const sync = startKeySync({ redisUrl: redisUrl(), keysFile, role: "shared" });
    const unroute = routeKeysChanges(keysFile, sync.store!);
    try {
      return await work(keysFile);
    } finally {
      unroute();
      await sync.close();
    }
  };
  const status = async (server: Server, key: string) => {
    const res = await fetch(`${server.url}/v1/sales/active.json?apikey=${key}`);
    await res.arrayBuffer();
    return res.status;
  };
  /** Asks `server` until `key` answers `expected`. */
  const until = async (server: Server, key: string, expected: number) => {
    const since = performance.now();
    for (;;) {
      const got = await status(server, key);
      if (got === expected) return;
      if (performance.now() - since > WITHIN_MS)
        throw new Error(`${server.url}: ${key} still ${got} after ${WITHIN_MS} ms, not ${expected}`);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  };
  const metric = async (server: Server, name: string) => {
    const res = await fetch(`${server.url}/metrics`, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } });
    return new RegExp(`^flash_sale_${name}\\{role="shared"\\} (\\S+)$`, "m").exec(await res.text())?.[1];
  };
  const changeOf = async (machine: string) =>
    (JSON.parse(await readFile(changeFileOf(keysFileOf(machine)), "utf8")) as { change: number }).change;

  beforeAll(async () => {
    root = await tempDir();
    dataDir = join(root, "data");
    await buildStandardSnapshot(root, dataDir);
    for (const m of ["a", "b"]) await mkdir(join(root, m));
    redisPort = await freePort();
    redis = await startRedis(redisPort);
  }, 60_000);
  afterAll(async () => {
    await Promise.all(children.map((c) => stopProcess(c, "SIGKILL")));
    await stopProcess(redis, "SIGKILL");
  });

  it("A refuses B's keys (log line, metric), keeps the key revoked, and gives Redis its revocation, which B takes", async () => {
    let a = await startServer("a");
    let b = await startServer("b");
    const key = await onMachine("a", (file) => createKey(file, "k", new Date(), LIMITS));
    await Promise.all([until(a, key, 200), until(b, key, 200)]);

    await stopProcess(b, "SIGKILL"); // B is down: its copy has the key live
    await onMachine("a", (file) => revokeKey(file, "k"));
    await until(a, key, 401);
    await stopProcess(a, "SIGKILL"); // A is down: its copy has the key revoked
    await stopProcess(redis, "SIGKILL");
    redis = await startRedis(redisPort); // Redis lost its data

    b = await startServer("b");
    await b.waitFor(/Redis at \S+ held no keys \(or older ones\): gave it \S+b\/keys\.json \(change 1\)/);
    const made = await onMachine("b", (file) => createKey(file, "n", new Date(), LIMITS));
    await until(b, made, 200);
    expect(await status(b, key)).toBe(200); // B never heard of the revocation
    expect([await changeOf("a"), await changeOf("b")]).toEqual([2, 2]); // both copies are "change 2"

    a = await startServer("a");
    // Its first look at Redis: a refusal, or (taking B's keys) a line saying it is in step.
    await a.waitFor(/"event":"keys_copy_refused"|serve: keys shared from Redis/);
    expect(a.output()).toMatch(
      /"event":"keys_copy_refused".*holds keys \(change 2\) whose history does not descend from this machine's copy \S+ \(change 2\)/,
    );
    expect(await status(a, key)).toBe(401); // not applied: A serves its copy
    expect(await status(a, made)).toBe(401); // B's new key is not on A until the operator says which keys to keep
    expect(Number(await metric(a, "keys_refused_total"))).toBeGreaterThanOrEqual(1);
    expect(await metric(a, "keys_synced")).toBe("0");
    await a.waitFor(
      /gave Redis at \S+ 1 revocation this machine's copy holds, which its keys \(change 2\) did not have/,
    );
    await until(b, key, 401); // the revocation reached B through Redis
    expect(await status(b, made)).toBe(200);
    expect(a.output().match(/keys_copy_refused/g)).toHaveLength(1); // once for B's history, however often it changes
    const client = connectKeysRedis(redisUrl(), "test");
    await once(client, "ready");
    expect(await client.hget(KEYS_DOC, "change")).toBe("3");
    client.disconnect();

    // The operator takes Redis's keys on A (the documented remedy): both keys as B has them.
    await rm(changeFileOf(keysFileOf("a")));
    await until(a, made, 200);
    expect(await status(a, key)).toBe(401);
    expect(await metric(a, "keys_synced")).toBe("1");
  }, 120_000);
});
