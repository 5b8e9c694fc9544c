// GET /v1/events: sale events at their instants on the injected clock, resuming on another server, swaps, caps, drops.
import { connect } from "node:net";
import { join } from "node:path";
import v8 from "node:v8";
import vm from "node:vm";
import { afterEach, describe, expect, it } from "vitest";
import { buildSnapshot } from "../../../src/generate/index.ts";
import { createKey } from "../../../src/keys/keys-file.ts";
import type { EventStreamOptions } from "../../../src/serve/events/hub.ts";
import { createHandler } from "../../../src/serve/handler.ts";
import { startServer } from "../../../src/serve/http/server.ts";
import {
  BASE,
  D,
  DOCS_CACHE,
  iso,
  sale,
  standardCatalog,
  startTestApi,
  T0,
  withKey,
  writeCatalog,
} from "../../helpers/fixture.ts";
import type { TestApi } from "../../helpers/fixture.ts";
import { clockScheduler, openSse, poll } from "../../helpers/sse.ts";
import type { SseClient } from "../../helpers/sse.ts";

v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;

const H = 3600;
const opened: { close(): unknown }[] = [];
afterEach(async () => {
  for (const c of opened.splice(0)) await c.close();
});

/** A test API whose event timers follow its injected clock. */
async function start(catalog = standardCatalog(), events: EventStreamOptions = {}) {
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
  const api = (made.api = await startTestApi(catalog, { events: { scheduler: timers.scheduler, ...events } }));
  opened.push(api);
  return Object.assign(api, { advanceTo: timers.advanceTo });
}

/**
 * The standard catalog and `n` home sales of ~10 KB, beginning at T0+H and ending at `ends`: megabytes of events, more
 * than the kernel holds (some MB on loopback) for a client that does not read.
 */
function withBigSales(n: number, ends: number) {
  const catalog = standardCatalog();
  for (let i = 0; i < n; i++)
    catalog.sales.push(
      sale(`big-${i}`, { store: "home", begins: iso(T0 + H), ends: iso(ends), description: "x".repeat(10_000) }),
    );
  return catalog;
}

async function stream(api: TestApi, params = "", headers: Record<string, string> = {}): Promise<SseClient> {
  const client = await openSse(api.url + withKey(api, "/v1/events", params), headers);
  opened.push(client);
  return client;
}

const data = (c: SseClient, i: number) =>
  JSON.parse(c.events[i]!.data) as {
    sale: { sale_key: string; sale_url: string; name: string };
    at: string;
    sent: string;
  };

describe("GET /v1/events", () => {
  it("sends retry and a comment at once, then begins and ends at their instants, in order", async () => {
    const api = await start();
    api.clock.now = T0 + H;
    const all = await stream(api);
    const home = await stream(api, "store=home&affid=partner7");
    const women = await stream(api, "store=women");
    expect(all.res.statusCode).toBe(200);
    expect(all.res.headers["content-type"]).toBe("text/event-stream");
    expect(all.res.headers["cache-control"]).toBe("no-store");
    expect(all.res.headers["content-encoding"]).toBeUndefined();
    await all.until(() => all.retry !== null && all.comments.length > 0);
    expect(all.retry).toBe(2000);

    api.advanceTo(T0 + 2 * H - 1);
    api.advanceTo(T0 + 2 * H); // "soon" (home) begins
    await all.until(() => all.events.length === 1);
    await home.until(() => home.events.length === 1);
    expect(all.events[0]!.event).toBe("sale.begins");
    expect(data(all, 0).sale.sale_key).toBe("soon");
    expect(data(all, 0).at).toBe(iso(T0 + 2 * H));
    expect(data(all, 0).sent).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Date.parse(data(all, 0).sent)).toBe((T0 + 2 * H) * 1000);
    expect(data(home, 0).sale.sale_url).toContain("&affid=partner7");
    expect(data(all, 0).sale.sale_url).not.toContain("affid");
    expect(all.events[0]!.id).toBe(home.events[0]!.id);

    api.advanceTo(T0 + 5 * H); // "soon" ends
    api.advanceTo(T0 + D); // "dresses" (women) begins
    await all.until(() => all.events.length === 3);
    await women.until(() => women.events.length === 1);
    expect(all.events.map((e) => `${e.event} ${JSON.parse(e.data).sale.sale_key}`)).toEqual([
      "sale.begins soon",
      "sale.ends soon",
      "sale.begins dresses",
    ]);
    expect(women.events.map((e) => e.event)).toEqual(["sale.begins"]);
    expect(home.events.length).toBe(2);
    // A comment on connect, and one at each 15 s heartbeat that fell due as the clock moved.
    expect(all.comments.length).toBeGreaterThanOrEqual(3);
    expect(new Set(all.events.map((e) => e.id)).size).toBe(3);
  });

  it("resumes after Last-Event-ID on a second server with exactly the events missed", async () => {
    const a = await start();
    const b = await start();
    a.clock.now = T0 + H;
    const first = await stream(a);
    a.advanceTo(T0 + 2 * H);
    await first.until(() => first.events.length === 1);
    const last = first.events[0]!.id;
    first.close();
    // Meanwhile "soon" ended and "dresses" began; server b never had a stream open.
    b.advanceTo(T0 + D + 60);
    const resumed = await stream(b, "", { "Last-Event-ID": last });
    await resumed.until(() => resumed.events.length === 2);
    expect(resumed.events.map((e) => `${e.event} ${JSON.parse(e.data).sale.sale_key}`)).toEqual([
      "sale.ends soon",
      "sale.begins dresses",
    ]);
    // The same events, with the same IDs, as a stream on server a sees them.
    const live = await stream(a);
    a.advanceTo(T0 + D);
    await live.until(() => live.events.length === 2);
    expect(live.events.map((e) => e.id)).toEqual(resumed.events.map((e) => e.id));
    // An ID this server does not hold resumes from its second, at most 24 hours back: the events at T0 are older.
    const old = await stream(b, "", { "Last-Event-ID": `${T0 - 1}.1.AAAAAAAAAAAAAAAA` });
    await old.until(() => old.events.length === 3);
    expect(old.events.map((e) => `${e.event} ${JSON.parse(e.data).sale.sale_key}`)).toEqual([
      "sale.begins soon",
      "sale.ends soon",
      "sale.begins dresses",
    ]);
  });

  it("sends sale.announced and sale.updated when a snapshot swap changes the sales", async () => {
    const api = await start();
    api.clock.now = T0 + H;
    const client = await stream(api);
    const types = await stream(api, "types=sale.announced");
    const catalog = standardCatalog();
    catalog.sales = catalog.sales.map((s) => (s.key === "dresses" ? { ...s, name: "Dresses, now more" } : s));
    catalog.sales.push(sale("hats", { store: "men", begins: iso(T0 + 3 * H), ends: iso(T0 + 4 * H) }));
    const catalogDir = join(api.dataDir, "..", "catalog");
    await writeCatalog(catalogDir, catalog);
    await buildSnapshot({ catalogDir, dataDir: api.dataDir, baseUrl: BASE, docsCacheDir: DOCS_CACHE });
    expect((await api.handler.reload()).snapshotChanged).toBe(true);
    await client.until(() => client.events.length === 2);
    expect(client.events.map((e) => `${e.event} ${JSON.parse(e.data).sale.sale_key}`).sort()).toEqual([
      "sale.announced hats",
      "sale.updated dresses",
    ]);
    const updated = client.events.find((e) => e.event === "sale.updated")!;
    expect((JSON.parse(updated.data) as { sale: { name: string } }).sale.name).toBe("Dresses, now more");
    await types.until(() => types.events.length === 1);
    expect(types.events[0]!.event).toBe("sale.announced");
    // The new snapshot's instants are followed: "hats" begins at T0+3H.
    api.advanceTo(T0 + 2 * H);
    api.advanceTo(T0 + 3 * H);
    await client.until(() => client.events.length === 4);
    expect(client.events.slice(2).map((e) => `${e.event} ${JSON.parse(e.data).sale.sale_key}`)).toEqual([
      "sale.begins soon",
      "sale.begins hats",
    ]);
    // Resuming on this server from before the swap gets the swap's events again, in the order sent.
    const resumed = await stream(api, "", { "Last-Event-ID": `${T0}.1.AAAAAAAAAAAAAAAA` });
    await resumed.until(() => resumed.events.length === 4);
    expect(resumed.events.map((e) => e.id)).toEqual(client.events.map((e) => e.id));
  });

  it("gives sale.announced and sale.updated the same IDs on two servers that loaded the same snapshots", async () => {
    const a = await start();
    // A replica: another server on the same published snapshots (as npm run ship copies them), its own clock.
    const replicaClock = { now: T0 };
    const replicaTimers = clockScheduler(replicaClock);
    const replica = await createHandler({
      dataDir: a.dataDir,
      keysFile: a.keysFile,
      clock: () => replicaClock.now * 1000,
      events: { scheduler: replicaTimers.scheduler },
    });
    const replicaServer = await startServer(replica, "127.0.0.1", 0);
    opened.push(replicaServer);
    const replicaUrl = `http://127.0.0.1:${replicaServer.port}`;
    a.clock.now = T0 + H;
    replicaClock.now = T0 + H;
    const onA = await stream(a);
    const onReplica = await openSse(replicaUrl + withKey(a, "/v1/events"));
    opened.push(onReplica);
    const catalog = standardCatalog();
    catalog.sales = catalog.sales.map((s) => (s.key === "dresses" ? { ...s, name: "Dresses, now more" } : s));
    catalog.sales.push(sale("hats", { store: "men", begins: iso(T0 + 3 * H), ends: iso(T0 + 4 * H) }));
    const catalogDir = join(a.dataDir, "..", "catalog");
    await writeCatalog(catalogDir, catalog);
    await buildSnapshot({ catalogDir, dataDir: a.dataDir, baseUrl: BASE, docsCacheDir: DOCS_CACHE });
    // Each picks the new snapshot up at a second of its own.
    expect((await a.handler.reload()).snapshotChanged).toBe(true);
    replicaClock.now = T0 + H + 7;
    expect((await replica.reload()).snapshotChanged).toBe(true);
    await onA.until(() => onA.events.length === 2);
    await onReplica.until(() => onReplica.events.length === 2);
    const ids = (c: SseClient) => c.events.map((e) => `${e.event} ${e.id}`);
    expect(ids(onReplica)).toEqual(ids(onA));
    expect(onA.events.map((e) => e.event).sort()).toEqual(["sale.announced", "sale.updated"]);
    // A client of server a that left before the swap resumes on the replica: the swap's events, as a sent them.
    const resumed = await openSse(replicaUrl + withKey(a, "/v1/events"), {
      "Last-Event-ID": `${T0}.1.AAAAAAAAAAAAAAAA`,
    });
    opened.push(resumed);
    await resumed.until(() => resumed.events.length === 2);
    expect(ids(resumed)).toEqual(ids(onA));
  });

  it("answers 429 past the streams of a key, 503 past the server's, and 400 for an unknown type", async () => {
    const api = await start(standardCatalog(), { maxStreamsPerKey: 2, maxStreams: 3 });
    await stream(api);
    await stream(api);
    const third = await api.get(withKey(api, "/v1/events"));
    expect(third.status).toBe(429);
    expect(((await third.json()) as { code: string }).code).toBe("rate_limited");
    const other = await createKey(api.keysFile, "other", new Date(), { rate: 1e9, burst: 1e9 });
    await api.handler.reload();
    const mine = await openSse(`${api.url}/v1/events?apikey=${other}`);
    opened.push(mine);
    expect(mine.res.statusCode).toBe(200);
    const full = await api.get(`/v1/events?apikey=${other}`);
    expect(full.status).toBe(503);
    expect(full.headers.get("content-type")).toBe("application/problem+json");
    const bad = await api.get(withKey(api, "/v1/events", "types=sale.started"));
    expect(bad.status).toBe(400);
    expect((await api.get("/v1/events")).status).toBe(401);
  });

  it("drops a client that does not read once its unsent bytes pass the bound, and keeps one that reads", async () => {
    // 400 sales of ~10 KB beginning at once and ending at once: two 4 MB batches, more than the kernel holds (some
    // MB on loopback) for a client that never reads.
    const catalog = withBigSales(400, T0 + 3 * H);
    const api = await start(catalog, { maxUnsentBytes: 16_384, heartbeatMs: 10 * H * 1000 });
    api.clock.now = T0 + 60;
    const reader = await stream(api, "store=home");
    const socket = connect(Number(new URL(api.url).port), "127.0.0.1");
    opened.push({ close: () => socket.destroy() });
    socket.write(`GET ${withKey(api, "/v1/events")} HTTP/1.1\r\nHost: x\r\n\r\n`);
    socket.pause();
    await poll(() => api.handler.stats().events.streams === 2);
    api.advanceTo(T0 + H);
    await reader.until(() => reader.events.length === 400, 10_000);
    expect(api.handler.stats().events.dropped).toBe(0);
    api.advanceTo(T0 + 3 * H); // the next batch finds the non-reader's bytes of the first still unsent
    // 400 ends, and "soon" (home) began at T0+2H.
    await reader.until(() => reader.events.length === 801, 10_000);
    await poll(() => api.handler.stats().events.streams === 1);
    expect(api.handler.stats().events.dropped).toBe(1);
    expect(reader.ended).toBe(false);
  });

  it("sends a resuming client what it missed as it reads: a chunk held here at a time, events meanwhile after it", async () => {
    // 800 sales of ~10 KB began an hour ago: a client resuming from before them missed 8 MB, more than the kernel
    // holds for one that does not read (some MB on loopback).
    const catalog = withBigSales(800, T0 + 20 * H);
    const api = await start(catalog, { heartbeatMs: 3 * H * 1000 });
    api.advanceTo(T0 + H + 60);
    const resumed = await stream(api, "", { "Last-Event-ID": `${T0}.1.AAAAAAAAAAAAAAAA` });
    resumed.res.pause(); // it stops reading
    await poll(() => api.handler.stats().events.unsentBytes > 0); // the kernel's buffers are full
    const { unsentBytes, replaying } = api.handler.stats().events;
    // One chunk of 32 events at most, not the 8 MB (before: every missed event written at once, 4 MB held here).
    expect(unsentBytes).toBeLessThan(32 * 11_000);
    expect(replaying).toBe(1);
    api.advanceTo(T0 + 2 * H); // "soon" begins while the client is not reading: it comes after what was missed
    expect(api.handler.stats().events.unsentBytes).toBe(unsentBytes);
    resumed.res.resume();
    await resumed.until(() => resumed.events.length === 801, 10_000);
    const got = resumed.events.map((e) => `${e.event} ${JSON.parse(e.data).sale.sale_key}`);
    expect(got.slice(0, 800).every((e) => e.startsWith("sale.begins big-"))).toBe(true);
    expect(got[800]).toBe("sale.begins soon");
    const ids = resumed.events.slice(0, 800).map((e) => e.id);
    expect(new Set(ids).size).toBe(800);
    expect(ids).toEqual([...ids].sort()); // one second, one type: in the order of their IDs
    expect(api.handler.stats().events).toMatchObject({ replaying: 0, dropped: 0 });

    // One that never reads again is dropped once it has not read for a heartbeat's interval.
    const stuck = await stream(api, "", { "Last-Event-ID": `${T0}.1.AAAAAAAAAAAAAAAA` });
    stuck.res.pause();
    await poll(() => api.handler.stats().events.unsentBytes > 0);
    expect(api.handler.stats().events.replaying).toBe(1);
    api.advanceTo(T0 + 8 * H);
    await poll(() => api.handler.stats().events.streams === 1);
    expect(api.handler.stats().events).toMatchObject({ replaying: 0, dropped: 1 });
    expect(resumed.ended).toBe(false);
  });

  it("ends a stream still being sent what it missed at a swap; resumed, it gets the rest from the new snapshot", async () => {
    const catalog = withBigSales(800, T0 + 20 * H);
    const api = await start(catalog);
    api.advanceTo(T0 + H + 60);
    const first = await stream(api, "", { "Last-Event-ID": `${T0}.1.AAAAAAAAAAAAAAAA` });
    first.res.pause();
    await poll(() => api.handler.stats().events.unsentBytes > 0);
    catalog.sales.push(sale("hats", { store: "men", begins: iso(T0 + 3 * H), ends: iso(T0 + 4 * H) }));
    const catalogDir = join(api.dataDir, "..", "catalog");
    await writeCatalog(catalogDir, catalog);
    await buildSnapshot({ catalogDir, dataDir: api.dataDir, baseUrl: BASE, docsCacheDir: DOCS_CACHE });
    expect((await api.handler.reload()).snapshotChanged).toBe(true);
    expect(api.handler.stats().events.replaying).toBe(0);
    first.res.resume();
    await first.until(() => first.ended, 10_000);
    const got = first.events.length;
    expect(got).toBeGreaterThan(0);
    expect(got).toBeLessThan(800);
    const second = await stream(api, "", { "Last-Event-ID": first.events.at(-1)!.id });
    await second.until(() => second.events.length === 800 - got + 1, 10_000);
    const keys = [...first.events, ...second.events].map((e) => `${e.event} ${JSON.parse(e.data).sale.sale_key}`);
    expect(keys.at(-1)).toBe("sale.announced hats");
    expect(new Set(keys.slice(0, 800)).size).toBe(800);
    expect(keys.slice(0, 800).every((k) => k.startsWith("sale.begins big-"))).toBe(true);
  });

  it("ends every stream when the server closes, and holds each open stream in a few KB", async () => {
    const lots = 1000; // one key, account and address hold them all
    const api = await start(standardCatalog(), {
      maxStreamsPerKey: lots,
      maxStreamsPerAccount: lots,
      maxStreamsPerAddress: lots,
    });
    const n = 500;
    const clients: SseClient[] = [];
    // One stream first, so that what the first one sets up once is not counted per stream.
    clients.push(await openSse(api.url + withKey(api, "/v1/events")));
    await poll(() => api.handler.stats().events.streams === 1);
    gc();
    gc();
    const before = process.memoryUsage();
    for (let i = 0; i < n; i++) clients.push(await openSse(api.url + withKey(api, "/v1/events")));
    await poll(() => api.handler.stats().events.streams === n + 1);
    await poll(() => clients.every((c) => c.retry !== null));
    gc();
    gc();
    const after = process.memoryUsage();
    const perStream =
      (after.heapUsed + after.external + after.arrayBuffers - before.heapUsed - before.external - before.arrayBuffers) /
      n;
    // Both ends are in this process (the server's response and socket, the client's request and parser): an upper
    // bound on the server's share, kernel buffers aside.
    console.log(`events: ${(perStream / 1024).toFixed(1)} KB of heap per open stream, client included`);
    expect(perStream).toBeGreaterThan(0);
    expect(perStream).toBeLessThan(64 * 1024);
    opened.splice(opened.indexOf(api), 1);
    await api.close(); // resolves only once every stream has ended
    await poll(() => clients.every((c) => c.ended));
  });
});
