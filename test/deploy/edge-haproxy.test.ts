// deploy/haproxy/haproxy.cfg (issue 37) through a real haproxy in front of a server: the edge contract
// (test/helpers/edge-contract.ts) with the keys pushed to its map through the runtime API (src/edge/haproxy.ts), a
// resync of 100,000 keys while requests flow, and its log's key names.
import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHaproxyFront } from "../../scripts/lib/haproxy-front.ts";
import type { HaproxyFront } from "../../scripts/lib/haproxy-front.ts";
import { requireProgram } from "../../scripts/lib/test-programs.ts";
import { parseConfig } from "../../src/config/api-settings.ts";
import { createFronts } from "../../src/edge/fronts.ts";
import { createHaproxyFront, keyStatesOf, renderHaproxyMap, runtimeCommand } from "../../src/edge/haproxy.ts";
import type { KeyState } from "../../src/edge/front.ts";
import { createKey, loadKeysFile, revokeKey } from "../../src/keys/keys-file.ts";
import { describeEdgeContract, send } from "../helpers/edge-contract.ts";
import { freePort, startTestApi, tempDir } from "../helpers/fixture.ts";
import type { TestApi } from "../helpers/fixture.ts";

const statesOf = async (keysFile: string) => keyStatesOf(await loadKeysFile(keysFile), Date.now());

/** haproxy in front of 127.0.0.1:`upstreamPort`, its map first written from `keysFile`. */
async function startHaproxy(upstreamPort: number, keysFile: string): Promise<HaproxyFront> {
  return startHaproxyFront({
    program: requireProgram("haproxy"),
    dir: await tempDir("fsa-haproxy-"),
    port: await freePort(),
    upstreamPort,
    map: renderHaproxyMap(await statesOf(keysFile)),
  });
}

// The fronts started for a keys file, told of its changes as the API would push them: every key's state.
const running = new Map<string, HaproxyFront>();
describeEdgeContract(
  "HAProxy",
  async (port, keysFile) => {
    const h = await startHaproxy(port, keysFile);
    running.set(keysFile, h);
    return h;
  },
  {
    // HAProxy passes the API's Cache-Control on with an Age (as Varnish does).
    cacheControl: (origin, front, age) => {
      const maxAge = (v: string | undefined) => Number(/max-age=(\d+)/.exec(v ?? "")?.[1]);
      if (!origin?.startsWith("public")) return front === origin;
      const same = front?.replace(/\d+$/, "") === origin.replace(/\d+$/, "");
      return same && Math.abs(maxAge(front) - age - maxAge(origin)) <= 1;
    },
    keysChanged: async (keysFile) =>
      createHaproxyFront("haproxy", running.get(keysFile)!.socket).push(await statesOf(keysFile)),
    collapsesMisses: false,
  },
);

describe("HAProxy's map and log", () => {
  let api: TestApi;
  let haproxy: HaproxyFront;
  beforeAll(async () => {
    api = await startTestApi(undefined, { clock: Date.now, trustProxy: ["127.0.0.1"] });
    haproxy = await startHaproxy(Number(new URL(api.url).port), api.keysFile);
  }, 60_000);
  afterAll(async () => {
    await haproxy?.stop();
    await api?.close();
  });

  it("names the key of every request it checked, hits and 429s included, never the key; key=- without one", async () => {
    const target = `/v1/products/categories.json?apikey=${api.key}&affid=log`;
    for (let i = 0; i < 3; i++) expect((await send(haproxy.url, target)).status).toBe(200);
    expect(
      (await send(haproxy.url, "/v1/products/categories.json?affid=log", { headers: { "X-Api-Key": api.key } })).status,
    ).toBe(200);
    expect((await send(haproxy.url, "/v1/products/categories.json?affid=nokey")).status).toBe(401);
    const wrong = `/v1/products/categories.json?APIKEY=${api.key}&affid=wrong&ap%69key=${"A".repeat(32)}`;
    expect((await send(haproxy.url, wrong)).status).toBe(401);
    const lines = async () =>
      (await readFile(haproxy.log, "utf8")).split("\n").filter((l) => l.includes("/v1/products/"));
    // HAProxy writes a request's line once its answer is sent: wait for the last one.
    for (let deadline = Date.now() + 5_000; (await lines()).length < 6 && Date.now() < deadline;)
      await new Promise((r) => setTimeout(r, 10));
    expect(
      (await lines()).map((l) =>
        / "(GET \S+) HTTP\/1\.1" (\d+) \d+ rt=\d+ cache=(\S+) server=(\S+) key=(\S+)$/.exec(l)?.slice(1),
      ),
    ).toEqual([
      // a checked request's target as it goes on, its key parameter taken out
      ["GET /v1/products/categories.json?affid=log", "200", "-", "api", "test"],
      ["GET /v1/products/categories.json?affid=log", "200", "HIT", "<CACHE>", "test"],
      ["GET /v1/products/categories.json?affid=log", "200", "HIT", "<CACHE>", "test"],
      ["GET /v1/products/categories.json?affid=log", "200", "HIT", "<CACHE>", "test"],
      ["GET /v1/products/categories.json?affid=nokey", "401", "-", "api", "-"],
      // a refused one's as sent, its key parameters redacted
      ["GET /v1/products/categories.json?apikey=[redacted]&affid=wrong&apikey=[redacted]", "401", "-", "api", "-"],
    ]);
    expect((await readFile(haproxy.log, "utf8")).includes(api.key)).toBe(false);
  });

  it("refuses a revoked key at once when told, though a copy it was served is still fresh", async () => {
    const front = createHaproxyFront("haproxy", haproxy.socket);
    const k = await createKey(api.keysFile, "revoked-now", new Date());
    await api.handler.reload();
    await front.push(await statesOf(api.keysFile));
    const target = `/v1/products/categories.json?apikey=${k}&affid=revoked`;
    const before = [await send(haproxy.url, target), await send(haproxy.url, target)];
    expect(before.map((r) => [r.status, r.headers["x-cache"]])).toEqual([
      [200, "MISS"],
      [200, "HIT"],
    ]);
    const revoked = Date.now();
    await revokeKey(api.keysFile, "revoked-now");
    await Promise.all([api.handler.reload(), front.push(await statesOf(api.keysFile))]);
    const after = await send(haproxy.url, target);
    const ms = Date.now() - revoked;
    console.log(
      `HAProxy: a revoked key was refused ${ms} ms after the revocation (the keys file written, then pushed)`,
    );
    expect([after.status, after.headers["x-cache"]]).toEqual([401, undefined]);
    expect(ms).toBeLessThan(2_000);
  });

  it("is pushed to as EDGE_FRONTS names it (its runtime API's unix socket), as the server's pusher makes it", async () => {
    const fronts = parseConfig({ EDGE_FRONTS: `edge-1=haproxy:unix://${haproxy.socket}` }).edgeFronts;
    const [front] = createFronts(fronts);
    const k = await createKey(api.keysFile, "pushed-by-config", new Date());
    await api.handler.reload();
    await front!.resync(await statesOf(api.keysFile));
    const target = `/v1/products/categories.json?apikey=${k}&affid=by-config`;
    expect((await send(haproxy.url, target)).status).toBe(200);
    await revokeKey(api.keysFile, "pushed-by-config");
    await Promise.all([api.handler.reload(), front!.push(await statesOf(api.keysFile))]);
    expect((await send(haproxy.url, target)).status).toBe(401);
  });

  it("never refuses a key whose bucket refilled between its requests (its full instant already past)", async () => {
    // 10,000 a second, bursts of 2: a token back every 100 us, less than one request over loopback takes, so each
    // request finds the bucket full again, its stored instant behind now.
    const k = await createKey(api.keysFile, "fast-refill", new Date(), { rate: 10_000, burst: 2 });
    await api.handler.reload();
    await createHaproxyFront("haproxy", haproxy.socket).push(await statesOf(api.keysFile));
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++)
      statuses.push((await send(haproxy.url, `/v1/products/categories.json?apikey=${k}&affid=refill`)).status);
    expect(statuses).toEqual(Array.from({ length: 20 }, () => 200));
  });

  it("keeps no copy of a path the API reads as under /v1/ but spelt otherwise (its key unchecked here)", async () => {
    for (const target of [
      `//v1/products/sizes.json?apikey=${api.key}`,
      `/%761/products/sizes.json?apikey=${api.key}`,
      `/v1//products/sizes.json?apikey=${api.key}`,
    ]) {
      const answers = [await send(haproxy.url, target), await send(haproxy.url, target)];
      const seen = answers.map((r) => [r.status, r.headers["x-cache"] ?? "none"]);
      expect([target, seen.some(([, cache]) => cache === "HIT" && !target.startsWith("/v1/"))]).toEqual([
        target,
        false,
      ]);
    }
  });

  it("resyncs 100,000 keys in one new version while requests flow, never refusing a valid key", async () => {
    const front = createHaproxyFront("haproxy", haproxy.socket);
    const others: KeyState[] = Array.from({ length: 100_000 }, (_, i) => ({
      hash: `sha256:${i.toString(16).padStart(64, "0")}`,
      valid: { name: `partner-${i}`, rate: 50, burst: 200, until: Infinity },
    }));
    const all = [...(await statesOf(api.keysFile)), ...others];
    const target = `/v1/products/sizes.json?apikey=${api.key}`;
    let flowing = true;
    const statuses = new Map<number, number>();
    const flow = (async () => {
      while (flowing) {
        const { status } = await send(haproxy.url, target);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
    })();
    const started = Date.now();
    await front.resync(all);
    const ms = Date.now() - started;
    await front.resync(all); // and again, over a full map
    flowing = false;
    await flow;
    console.log(
      `HAProxy: a resync of ${all.length} keys took ${ms} ms; answers meanwhile ${JSON.stringify([...statuses])}`,
    );
    expect([...statuses.keys()]).toEqual([200]);
    expect(statuses.get(200)).toBeGreaterThan(10);
    const listed = await runtimeCommand(haproxy.socket, "show map");
    expect(listed).toMatch(new RegExp(`entry_cnt=${all.filter((s) => s.valid).length}\\b`));
  }, 120_000);
});
