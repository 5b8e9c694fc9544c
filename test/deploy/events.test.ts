// GET /v1/events through the shipped fronts, the real nginx (deploy/nginx/flash-sale-api.conf) and varnishd
// (deploy/varnish/default.vcl) in front of a real server on the real clock: the stream's first comment comes at once
// and a sale's beginning within a second of its instant (nothing buffered), every client gets a stream of its own
// from the server (nothing cached or shared), and Last-Event-ID reaches the server (a client resuming through the
// front gets what it missed). Two sales begin a few seconds after the server starts.
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { iso, sale, standardCatalog, startTestApi } from "../helpers/fixture.ts";
import type { TestApi } from "../helpers/fixture.ts";
import { startNginx } from "../helpers/fronts.ts";
import { openSse } from "../helpers/sse.ts";
import type { SseClient } from "../helpers/sse.ts";
import { startVarnish } from "../helpers/varnish.ts";

const VCL = fileURLToPath(new URL("../../deploy/varnish/default.vcl", import.meta.url));

let api: TestApi;
const fronts: { name: string; url: string; stop(): Promise<void> }[] = [];
const clients: SseClient[] = [];
/** The two sales' instants, epoch seconds. */
let first: number;
let second: number;

beforeAll(async () => {
  // Time enough to build, start both fronts and open the streams before the first sale begins.
  first = Math.ceil(Date.now() / 1000) + 12;
  second = first + 3;
  const catalog = standardCatalog();
  catalog.sales.push(
    sale("first", { store: "home", begins: iso(first), ends: iso(first + 3600) }),
    sale("second", { store: "men", begins: iso(second), ends: iso(second + 3600) }),
  );
  // The fronts' key checks (GET /edge/key) are answered to a trusted proxy only.
  api = await startTestApi(catalog, { clock: Date.now, trustProxy: ["127.0.0.1"] });
  const port = Number(new URL(api.url).port);
  const [nginx, varnish] = await Promise.all([startNginx(port), startVarnish(VCL, port)]);
  fronts.push({ name: "nginx", ...nginx }, { name: "Varnish", ...varnish });
}, 60_000);

afterAll(async () => {
  for (const c of clients) c.close();
  for (const f of fronts) await f.stop();
  await api?.close();
});

/** Opens a stream through `base`; resolves with it and how long its first comment took, ms. */
async function open(base: string, headers: Record<string, string> = {}) {
  const started = performance.now();
  const c = await openSse(`${base}/v1/events?apikey=${api.key}`, headers);
  clients.push(c);
  await c.until(() => c.comments.length > 0, 5_000);
  return { c, firstCommentMs: performance.now() - started };
}

describe("GET /v1/events through the shipped nginx and Varnish", () => {
  it("streams at once, unbuffered and unshared, within a second of the instant; Last-Event-ID passes through", async () => {
    const streams = await Promise.all(
      fronts.map(async (f) => ({ front: f, a: await open(f.url), b: await open(f.url) })),
    );
    expect(Date.now() / 1000, "the streams opened after the first sale began: raise the lead").toBeLessThan(first);
    for (const { front, a, b } of streams) {
      for (const s of [a, b]) {
        expect([front.name, s.c.res.statusCode, s.c.res.headers["content-type"]]).toEqual([
          front.name,
          200,
          "text/event-stream",
        ]);
        expect([front.name, s.c.retry]).toEqual([front.name, 2000]);
        // At once: the retry field and the comment come before any event exists to push them out.
        expect([front.name, s.firstCommentMs < 1000]).toEqual([front.name, true]);
        expect([front.name, s.c.res.headers["x-cache"] ?? "none"]).not.toContain("HIT");
      }
    }
    // Every client has a stream of its own at the server: two per front.
    expect(api.handler.stats().events.streams).toBe(2 * fronts.length);

    // The first sale begins: on every stream within a second of its instant.
    const arrived = new Map<SseClient, number>();
    const watch = (c: SseClient, n: number) =>
      c.until(() => c.events.length >= n, 20_000).then(() => arrived.set(c, Date.now()));
    await Promise.all(streams.flatMap(({ a, b }) => [watch(a.c, 1), watch(b.c, 1)]));
    for (const { front, a, b } of streams) {
      for (const c of [a.c, b.c]) {
        expect([front.name, c.events[0]!.event, JSON.parse(c.events[0]!.data).sale.sale_key]).toEqual([
          front.name,
          "sale.begins",
          "first",
        ]);
        expect([front.name, arrived.get(c)! - first * 1000 < 1000]).toEqual([front.name, true]);
      }
      expect(a.c.events[0]!.id).toBe(b.c.events[0]!.id);
    }

    // Client a leaves after the first sale; the second begins; a resumes through the same front with its last ID.
    for (const { a } of streams) a.c.close();
    await Promise.all(streams.map(({ b }) => watch(b.c, 2)));
    for (const { front, a, b } of streams) {
      const missed = b.c.events[1]!;
      expect([front.name, JSON.parse(missed.data).sale.sale_key]).toEqual([front.name, "second"]);
      const resumed = await open(front.url, { "Last-Event-ID": a.c.events[0]!.id });
      await resumed.c.until(() => resumed.c.events.length === 1);
      expect([front.name, resumed.c.events.map((e) => [e.id, e.event])]).toEqual([
        front.name,
        [[missed.id, missed.event]],
      ]);
    }
  }, 60_000);
});
