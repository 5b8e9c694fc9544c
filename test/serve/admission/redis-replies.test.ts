// REDIS_URL pointing at a Redis that answers the token-bucket script wrongly (a fake one, test/helpers/fake-redis.ts):
// every reply is checked (parseTakeReply), and a wrong one counts as Redis being unavailable: per-process limits,
// logged once for the whole outage, flash_sale_rate_limits_shared at 0, never a 429 without a whole Retry-After, a key
// never granted more than its per-process allowance, and the failed-key lockout still on.
import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKey } from "../../../src/keys/keys-file.ts";
import { parseTakeReply, RedisReplyError } from "../../../src/serve/admission/shared-limits.ts";
import { startFakeRedis } from "../../helpers/fake-redis.ts";
import type { FakeRedis, Reply, ScriptCall } from "../../helpers/fake-redis.ts";
import { buildStandardSnapshot, spawnServe, tempDir } from "../../helpers/fixture.ts";

describe("parseTakeReply", () => {
  const limit = { rate: 0.01, burst: 10 };
  it.each([
    [[0, "10.000000"], 0, { taken: 0, left: 10 }],
    [[2, "8.000000"], 2, { taken: 2, left: 8 }],
    [[1, "0.000000"], 5, { taken: 1, left: 0 }],
    [[0, "0.5"], 1, { taken: 0, left: 0.5 }],
    [[5, "3"], 5, { taken: 5, left: 3 }],
  ])("%j for %i wanted: %j", (reply, want, expected) => {
    expect(parseTakeReply(reply, limit, want)).toEqual(expected);
  });

  it.each([
    ["strings", ["abc", "xyz"]],
    ["taken far above asked", [1_000_000_000, "0"]],
    ["taken one above asked", [3, "0.000000"]],
    ["taken negative", [-1, "5.000000"]],
    ["taken a float", [1.5, "5.000000"]],
    ["taken NaN", [NaN, "5.000000"]],
    ["taken Infinity", [Infinity, "5.000000"]],
    ["taken a string", ["1", "5.000000"]],
    ["taken a bigint", [1n, "5.000000"]],
    ["taken unsafe", [2 ** 53 + 2, "5.000000"]],
    ["left negative", [1, "-1.000000"]],
    ["left above the burst", [1, "10.000001"]],
    ["left NaN", [1, "nan"]],
    ["left NaN as a number", [1, NaN]],
    ["left inf", [1, "inf"]],
    ["left in exponent form", [1, "1e1"]],
    ["left hex", [1, "0x5"]],
    ["left with spaces", [1, " 5"]],
    ["left empty", [1, ""]],
    ["left a number", [1, 5]],
    ["left nil", [1, null]],
    ["left huge", [1, "9".repeat(400)]],
    ["nested", [[1, "5.000000"], "5.000000"]],
    ["one element", [1]],
    ["three elements", [1, "5.000000", 1]],
    ["empty array", []],
    ["nil", null],
    ["a number", 42],
    ["a string", "OK"],
    ["an object", { taken: 1, left: "5" }],
  ])("%s: a RedisReplyError", (_, reply) => {
    expect(() => parseTakeReply(reply, limit, 2)).toThrow(RedisReplyError);
  });

  it("names the reply in its message, cut to 100 characters", () => {
    expect(() => parseTakeReply(["abc", "xyz"], limit, 2)).toThrow(/token-bucket script .*\["abc","xyz"\]/);
    expect(() => parseTakeReply([1, "9".repeat(400)], limit, 2)).toThrow(/^.{1,250}\.\.\.$/);
  });
});

/** A child process and what it wrote on stderr, with a wait for a pattern in it. */
function watch(child: ChildProcess) {
  let text = "";
  const waiters = new Set<() => void>();
  child.stderr!.on("data", (c: Buffer) => {
    text += c.toString();
    for (const w of waiters) w();
  });
  return {
    child,
    output: () => text,
    /** Resolves with the first match of `pattern`; fails if the process exits first, or after `ms`. */
    waitFor: (pattern: RegExp, ms = 20_000) =>
      new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no ${pattern} within ${ms} ms: ${text}`));
        }, ms);
        const check = () => {
          const found = pattern.exec(text);
          if (found) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(found[0]);
          }
        };
        waiters.add(check);
        child.once("exit", (code) => reject(new Error(`exited (${code}) before ${pattern}: ${text}`)));
        check();
      }),
  };
}

/** Checks `condition` every 10 ms until it holds; fails after `ms`. */
async function until(condition: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await delay(10);
  }
}

const METRICS_TOKEN = "redis-replies-metrics-token";
/** The limited key's: 10 at once, refilled too slowly to matter during a test. */
const KEY_LIMIT = { rate: 0.01, burst: 10 };
/** Failed authentications an address may make (DEFAULT_AUTH_FAILURE_LIMIT's burst, refilled at 1 a second). */
const FAILURES_ALLOWED = 10;
const LOCKED = /too many failed API-key/;

/** The right answer to a script call, from a full bucket (the fake's first answer, to the server's probe). */
const right = (c: ScriptCall): Reply => {
  const [, burst, want] = c.argv.map(Number) as [number, number, number];
  return [Math.min(want, burst), (burst - Math.min(want, burst)).toFixed(6)];
};
const wantOf = (c: ScriptCall) => Number(c.argv[2]);

/** Wrong answers to the script, each for every call after the first. */
const WRONG: [string, (c: ScriptCall) => Reply][] = [
  ["strings", () => ["abc", "xyz"]],
  ["taken far above asked", () => [1_000_000_000, "0"]],
  ["taken one above asked", (c) => [wantOf(c) + 1, "0.000000"]],
  ["a negative count", () => [-1, "5.000000"]],
  ["a negative count left", (c) => [wantOf(c), "-1.000000"]],
  ["NaN left", (c) => [wantOf(c), "nan"]],
  ["a RESP3 double NaN taken", () => ({ raw: "*2\r\n,nan\r\n$8\r\n5.000000\r\n" })],
  ["an integer out of range", () => ({ raw: "*2\r\n:99999999999999999999999\r\n$1\r\n0\r\n" })],
  ["a nested array", (c) => [[wantOf(c), "5.000000"], "5.000000"]],
  ["an error", () => new Error("ERR Error running script: @user_script:1: something went wrong")],
  ["nil", () => null],
  ["a nil array", () => ({ raw: "*-1\r\n" })],
];

describe("a Redis that answers the token-bucket script wrongly", () => {
  let dataDir: string;
  let keysFile: string;
  let limited: string;
  let good: string;
  const fakes: FakeRedis[] = [];
  const servers: ChildProcess[] = [];

  beforeAll(async () => {
    const root = await tempDir();
    dataDir = join(root, "data");
    keysFile = join(root, "keys.json");
    await buildStandardSnapshot(root, dataDir);
    limited = await createKey(keysFile, "limited", new Date(), KEY_LIMIT);
    good = await createKey(keysFile, "good", new Date());
  });
  afterAll(async () => {
    const running = servers.filter((s) => s.exitCode === null && s.signalCode === null);
    for (const s of running) s.kill("SIGKILL");
    await Promise.all(running.map((s) => once(s, "exit")));
    await Promise.all(fakes.map((f) => f.close()));
  });

  /** A server using the fake Redis `fake`, once it is listening. */
  const startServer = async (fake: FakeRedis) => {
    const child = spawnServe(
      { DATA_DIR: dataDir, KEYS_FILE: keysFile, LOG_REQUESTS: "0", REDIS_URL: fake.url, METRICS_TOKEN },
      ["ignore", "ignore", "pipe"],
    );
    servers.push(child);
    const server = watch(child);
    const url = (await server.waitFor(/listening on http:\/\/127\.0\.0\.1:\d+/)).replace("listening on ", "");
    return { ...server, url };
  };

  /** flash_sale_rate_limits_shared in the server's /metrics. */
  const sharedGauge = async (url: string) => {
    const res = await fetch(`${url}/metrics`, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } });
    return /^flash_sale_rate_limits_shared (\d)$/m.exec(await res.text())?.[1];
  };

  /** `n` requests in turn with `key`: their statuses, and the Retry-After of each 429 ("none" if it had none). */
  const send = async (url: string, key: string, n: number) => {
    const statuses: number[] = [];
    const retryAfter: string[] = [];
    for (let i = 0; i < n; i++) {
      const res = await fetch(`${url}/v1/sales/active.json?apikey=${key}`);
      await res.arrayBuffer();
      statuses.push(res.status);
      if (res.status === 429) retryAfter.push(res.headers.get("retry-after") ?? "none");
    }
    return { statuses, retryAfter };
  };

  /** `n` requests with a wrong key: the detail of each answer (a 401 each). */
  const wrongKeys = async (url: string, n: number) => {
    const details: string[] = [];
    for (let i = 0; i < n; i++) {
      const res = await fetch(`${url}/v1/sales/active.json?apikey=${"x".repeat(32)}`);
      expect(res.status).toBe(401);
      details.push(((await res.json()) as { detail: string }).detail);
    }
    return details;
  };

  /**
   * With Redis unavailable: the limited key gets exactly its burst from this process's own bucket, then 429s that
   * each say when to come back (a whole number of seconds, at least 1); wrong keys from this address are counted
   * exactly 10 times, then the address is locked out (a 401 that says so), and a valid key is still served from it.
   */
  const checkPerProcess = async (url: string) => {
    const { statuses, retryAfter } = await send(url, limited, KEY_LIMIT.burst + 5);
    expect(statuses).toEqual([...Array<number>(KEY_LIMIT.burst).fill(200), 429, 429, 429, 429, 429]);
    expect(retryAfter.filter((r) => !/^[1-9]\d*$/.test(r))).toEqual([]);
    const details = await wrongKeys(url, FAILURES_ALLOWED + 5);
    expect(details.map((d) => LOCKED.test(d))).toEqual([
      ...Array<boolean>(FAILURES_ALLOWED).fill(false),
      ...Array<boolean>(5).fill(true),
    ]);
    const res = await fetch(`${url}/v1/sales/active.json?apikey=${good}`);
    await res.arrayBuffer();
    expect(res.status).toBe(200);
  };

  const count = (text: string, pattern: RegExp) => text.match(new RegExp(pattern.source, "g"))?.length ?? 0;

  it.each(WRONG.map(([name, reply], i) => [name, reply, i % 2 === 0] as const))(
    "%s: per-process limits, logged once, the gauge at 0",
    async (_, reply, keyFirst) => {
      // The first call (the server's probe when it connects) is answered right: the limits are shared, until a
      // reservation gets a wrong answer; the probes on each reconnection get wrong answers too.
      const fake = await startFakeRedis((c) => (c.n === 0 ? right(c) : reply(c)));
      fakes.push(fake);
      const server = await startServer(fake);
      await server.waitFor(/rate limits shared through Redis/);
      expect(await sharedGauge(server.url)).toBe("1");
      // The first wrong reply comes to the key's reservation, or to the failed keys' (taken one at a time). That
      // request is granted (or counted) ahead of the reply, which is then thrown away with what was owed: a key gets
      // one batch (1 here) more than its burst, an address one failure more before it is locked out.
      if (keyFirst) expect((await send(server.url, limited, 1)).statuses).toEqual([200]);
      else expect((await wrongKeys(server.url, 1)).filter((d) => LOCKED.test(d))).toEqual([]);
      await server.waitFor(/"event":"redis_unavailable"/);
      expect(await sharedGauge(server.url)).toBe("0");
      await checkPerProcess(server.url);
      // Reconnected twice since, and asked the script again each time (wrong answers): still per process.
      await until(() => fake.connections >= 3 && fake.scriptCalls >= 4, "two reconnections");
      expect(await sharedGauge(server.url)).toBe("0");
      const { statuses, retryAfter } = await send(server.url, limited, 3);
      expect(statuses).toEqual([429, 429, 429]);
      expect(retryAfter.every((r) => /^[1-9]\d*$/.test(r))).toBe(true);
      expect(count(server.output(), /"event":"redis_unavailable"/)).toBe(1);
      expect(count(server.output(), /rate limits shared through Redis/)).toBe(1);
      expect(server.output()).toMatch(/"level":"warn".*rate limits are per process until it answers again/);
    },
    60_000,
  );

  it("answered wrongly from the first call: never shared, per-process limits, logged once, the gauge at 0", async () => {
    const fake = await startFakeRedis(() => [1_000_000_000, "0"]);
    fakes.push(fake);
    const server = await startServer(fake);
    await server.waitFor(/"event":"redis_unavailable".*token-bucket script/);
    expect(await sharedGauge(server.url)).toBe("0");
    await checkPerProcess(server.url);
    await until(() => fake.connections >= 3 && fake.scriptCalls >= 3, "two reconnections");
    expect(await sharedGauge(server.url)).toBe("0");
    expect(count(server.output(), /"event":"redis_unavailable"/)).toBe(1);
    expect(count(server.output(), /rate limits shared through Redis/)).toBe(0);
  }, 60_000);

  it("learns that the script answers right again: shared once more (after its wrong answers, logged once)", async () => {
    let wrong = true;
    const fake = await startFakeRedis((c) => (wrong ? ["abc", "xyz"] : right(c)));
    fakes.push(fake);
    const server = await startServer(fake);
    await server.waitFor(/"event":"redis_unavailable"/);
    await until(() => fake.connections >= 2, "a reconnection");
    wrong = false;
    await server.waitFor(/rate limits shared through Redis/);
    expect(await sharedGauge(server.url)).toBe("1");
    expect(count(server.output(), /"event":"redis_unavailable"/)).toBe(1);
  }, 60_000);
});
