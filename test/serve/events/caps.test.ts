// GET /v1/events' caps per account and per client address (IPv6 by /64, behind a trusted proxy too), besides those per
// key and per server, each taken before a stream is admitted: streams asked for at once meet the same caps as in
// turn. And a stream whose client takes nothing is dropped a heartbeat's interval later, though only heartbeats are
// left to send it. Over real HTTP, on the injected clock.
import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createKey } from "../../../src/keys/keys-file.ts";
import type { EventStreamOptions } from "../../../src/serve/events/hub.ts";
import type { HandlerOptions } from "../../../src/serve/handler-types.ts";
import { iso, sale, standardCatalog, startTestApi, T0, withKey } from "../../helpers/fixture.ts";
import type { TestApi } from "../../helpers/fixture.ts";
import { clockScheduler, openSse, poll } from "../../helpers/sse.ts";
import type { SseClient } from "../../helpers/sse.ts";

const H = 3600;
const TOKEN = "a-metrics-token-of-the-test";
const opened: { close(): unknown }[] = [];
afterEach(async () => {
  for (const c of opened.splice(0)) await c.close();
});

/** A test API whose event timers follow its injected clock. */
async function start(events: EventStreamOptions, options: Partial<HandlerOptions> = {}, catalog = standardCatalog()) {
  const made: { api?: TestApi } = {};
  const ref = {
    get now() {
      return made.api ? made.api.clock.now : T0;
    },
    set now(v: number) {
      made.api!.clock.now = v;
    },
  };
  const timers = clockScheduler(ref);
  const api = (made.api = await startTestApi(catalog, {
    ...options,
    events: { scheduler: timers.scheduler, ...events },
  }));
  opened.push(api);
  return Object.assign(api, { advanceTo: timers.advanceTo });
}

/** Keys named as the portal names a partner's (`p.<account>.<key>`), not rate-limited; their keys by name. */
async function partnerKeys(api: TestApi, names: string[]): Promise<Record<string, string>> {
  const keys: Record<string, string> = {};
  for (const name of names) keys[name] = await createKey(api.keysFile, name, new Date(), { rate: 1e9, burst: 1e9 });
  await api.handler.reload();
  return keys;
}

/** Opens a stream (kept open, closed after the test); its client, whatever its status. */
async function open(api: TestApi, key: string, headers: Record<string, string> = {}): Promise<SseClient> {
  const client = await openSse(`${api.url}/v1/events?apikey=${key}`, headers);
  opened.push(client);
  return client;
}

const statuses = (clients: SseClient[]) => clients.map((c) => c.res.statusCode);
const count = (clients: SseClient[], status: number) => statuses(clients).filter((s) => s === status).length;

/** One more stream asked for with `key` (and `headers`), refused: its status, Retry-After and problem. */
async function refusal(api: TestApi, key: string, headers: Record<string, string> = {}) {
  const res = await api.get(`/v1/events?apikey=${key}`, { headers });
  const body = (await res.json()) as { code: string; detail: string };
  return { status: res.status, retryAfter: res.headers.get("retry-after"), code: body.code, detail: body.detail };
}

describe("GET /v1/events' caps", () => {
  it("holds an account's streams, over all its keys, to its cap: the default 64 of 10 keys' 160 asked at once", async () => {
    const api = await start({});
    const names = Array.from({ length: 10 }, (_, i) => `p.acme.k${i}`);
    const keys = await partnerKeys(api, [...names, "p.acme.spare", "p.other.k0"]);
    // Every key asks for 16 streams (its own cap), all 160 at once.
    const asked = await Promise.all(names.flatMap((n) => Array.from({ length: 16 }, () => open(api, keys[n]!))));
    expect(count(asked, 200)).toBe(64);
    expect(count(asked, 429)).toBe(96);
    expect(api.handler.stats().events).toMatchObject({ streams: 64, refused: { account: 96, key: 0 } });
    expect(await refusal(api, keys["p.acme.spare"]!)).toEqual({
      status: 429,
      retryAfter: "5",
      code: "rate_limited",
      detail: "an account may hold 64 event streams at once",
    });
    // Another account's key is not held by it; and a stream of the account that closes gives its place back.
    expect((await open(api, keys["p.other.k0"]!)).res.statusCode).toBe(200);
    asked.find((c) => c.res.statusCode === 200)!.close();
    await poll(() => api.handler.stats().events.streams === 64);
    expect((await open(api, keys["p.acme.spare"]!)).res.statusCode).toBe(200);
  });

  it("holds a client address's streams to its cap, an IPv6 client's by /64, as the proxy names it", async () => {
    const api = await start(
      { maxStreamsPerAddress: 3, maxStreamsPerKey: 100, maxStreamsPerAccount: 100 },
      { trustProxy: ["127.0.0.1"], metricsToken: TOKEN },
    );
    const from = (address: string) => ({ "X-Forwarded-For": address });
    // Four addresses of one /64 ask for 2 streams each, at once: 3 are served.
    const net = ["2001:db8:1:2::a", "2001:db8:1:2::b", "2001:db8:1:2:ffff::1", "2001:db8:1:2:0:0:0:c"];
    const asked = await Promise.all(net.flatMap((a) => [open(api, api.key, from(a)), open(api, api.key, from(a))]));
    expect(count(asked, 200)).toBe(3);
    expect(count(asked, 429)).toBe(5);
    expect(await refusal(api, api.key, from("2001:db8:1:2::d"))).toEqual({
      status: 429,
      retryAfter: "5",
      code: "rate_limited",
      detail: "a client address may hold 3 event streams at once",
    });
    // The next /64, an IPv4 client and the proxy's own requests are others.
    expect((await open(api, api.key, from("2001:db8:1:3::a"))).res.statusCode).toBe(200);
    const v4 = await Promise.all(Array.from({ length: 5 }, () => open(api, api.key, from("198.51.100.7"))));
    expect(statuses(v4).sort()).toEqual([200, 200, 200, 429, 429]);
    expect((await open(api, api.key)).res.statusCode).toBe(200);
    expect(api.handler.stats().events).toMatchObject({ streams: 8, refused: { address: 8 } });
    const metrics = await (await api.get("/metrics", { headers: { Authorization: `Bearer ${TOKEN}` } })).text();
    for (const [cap, n] of Object.entries({ server: 0, key: 0, account: 0, address: 8 }))
      expect(metrics).toContain(`flash_sale_event_streams_refused_total{cap="${cap}"} ${n}\n`);
  });

  it("drops a stream whose client takes nothing a heartbeat's interval later, with only heartbeats to send it", async () => {
    // 400 sales of ~10 KB beginning at once: a 4 MB batch, more than the kernel holds (some MB on loopback) for a
    // client that does not read, then nothing but heartbeats. The bound on unsent bytes is set out of reach: what is
    // tested is the time a stream holds unsent bytes.
    const catalog = standardCatalog();
    for (let i = 0; i < 400; i++)
      catalog.sales.push(
        sale(`big-${i}`, {
          store: "home",
          begins: iso(T0 + H),
          ends: iso(T0 + 20 * H),
          description: "x".repeat(10_000),
        }),
      );
    const heartbeat = 60;
    const api = await start({ maxUnsentBytes: 1 << 30, heartbeatMs: heartbeat * 1000 }, {}, catalog);
    api.clock.now = T0 + 60;
    const reader = await open(api, api.key);
    const socket = connect(Number(new URL(api.url).port), "127.0.0.1");
    opened.push({ close: () => socket.destroy() });
    socket.write(`GET ${withKey(api, "/v1/events")} HTTP/1.1\r\nHost: x\r\n\r\n`);
    socket.pause(); // it never reads
    await poll(() => api.handler.stats().events.streams === 2);
    api.advanceTo(T0 + H);
    await reader.until(() => reader.events.length === 400, 10_000);
    expect(api.handler.stats().events.unsentBytes).toBeGreaterThan(0); // the non-reader's, past the kernel's buffers
    api.advanceTo(T0 + H + heartbeat - 1); // no write since the batch: nothing looked at
    expect(api.handler.stats().events).toMatchObject({ streams: 2, dropped: 0 });
    api.advanceTo(T0 + H + heartbeat); // the first heartbeat since: it has held the batch's bytes for an interval
    await poll(() => api.handler.stats().events.streams === 1);
    expect(api.handler.stats().events.dropped).toBe(1);
    api.advanceTo(T0 + H + 10 * heartbeat);
    await reader.until(() => reader.comments.length >= 10);
    expect(reader.ended).toBe(false);
    expect(api.handler.stats().events).toMatchObject({ streams: 1, dropped: 1 });
  }, 30_000);
});
