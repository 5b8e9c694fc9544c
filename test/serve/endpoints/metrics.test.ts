// GET /metrics: the Prometheus exposition, only for the holder of the metrics token; counters checked after known requests.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateKey } from "../../../src/keys/keys-file.ts";
import type { RequestLog } from "../../../src/serve/handler.ts";
import { D, startTestApi, T0, withKey } from "../../helpers/fixture.ts";
import { poll } from "../../helpers/sse.ts";
import type { TestApi } from "../../helpers/fixture.ts";

const TOKEN = "metrics-token-0123456789";
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi(undefined, { metricsToken: TOKEN, keyLimit: { rate: 1e9, burst: 1e9 } });
  api.handler.metrics!.watch(api.server.server);
});
afterAll(() => api.close());

/** The exposition's samples: `name{labels}` -> value. */
async function scrape(): Promise<Map<string, number>> {
  const res = await api.get("/metrics", { headers: { Authorization: `Bearer ${TOKEN}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  const samples = new Map<string, number>();
  for (const line of (await res.text()).split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const at = line.lastIndexOf(" ");
    samples.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return samples;
}

describe("/metrics", () => {
  it("refuses a request without the token, or with another, and never counts a label a client chose", async () => {
    const attempts: Record<string, string>[] = [
      {},
      { Authorization: "Bearer nope" },
      { Authorization: `Basic ${TOKEN}` },
      { Authorization: `Bearer ${TOKEN}x` },
    ];
    for (const headers of attempts) {
      const res = await api.get("/metrics", { headers });
      expect(res.status).toBe(401);
      expect(((await res.json()) as { code: string }).code).toBe("unauthorized");
    }
  });

  it("counts known requests by route class and status, rejections by reason, searches, bytes and the snapshot", async () => {
    const before = await scrape();
    const delta = (name: string, after: Map<string, number>) => (after.get(name) ?? 0) - (before.get(name) ?? 0);
    const statuses: number[] = [];
    const get = async (path: string) => statuses.push((await api.get(path)).status);
    for (let i = 0; i < 3; i++) await get(withKey(api, "/v1/products/1/detail.json"));
    await get(withKey(api, "/v1/products/999/detail.json"));
    await get(withKey(api, "/v1/products/998/detail.json"));
    await get(withKey(api, "/v1/sales/active.json"));
    await get(withKey(api, "/v1/sales/women/boots/detail.json"));
    await get(withKey(api, "/v1/products", "q=boot"));
    await get(withKey(api, "/v1/products", "q=boot&rows=0"));
    await get("/v1/sales/active.json");
    await get(`/v1/sales/active.json?apikey=${generateKey()}`);
    await get(`/v1/evil/${"x".repeat(40)}?apikey=${api.key}`);
    expect(statuses).toEqual([200, 200, 200, 404, 404, 200, 200, 200, 400, 401, 401, 404]);
    const after = await scrape();
    const counted: [string, number][] = [
      ['flash_sale_requests_total{route="product",status="200"}', 3],
      ['flash_sale_requests_total{route="product",status="404"}', 2],
      ['flash_sale_requests_total{route="sale_list",status="200"}', 1],
      ['flash_sale_requests_total{route="sale_list",status="401"}', 2],
      ['flash_sale_requests_total{route="sale_detail",status="200"}', 1],
      ['flash_sale_requests_total{route="search",status="200"}', 1],
      ['flash_sale_requests_total{route="search",status="400"}', 1],
      ['flash_sale_requests_total{route="other",status="404"}', 1],
      ['flash_sale_rejections_total{reason="api_key_missing"}', 1],
      ['flash_sale_rejections_total{reason="api_key_invalid"}', 1],
      ['flash_sale_request_duration_seconds_count{route="product"}', 5],
      ['flash_sale_request_duration_seconds_bucket{route="product",le="+Inf"}', 5],
      ["flash_sale_search_duration_seconds_count", 1],
    ];
    expect(counted.map(([name]) => [name, delta(name, after)])).toEqual(counted);
    expect(delta('flash_sale_response_bytes_total{route="product"}', after)).toBeGreaterThan(3 * 500);
    expect(after.get(`flash_sale_snapshot_info{snapshot="${api.handler.snapshot().id}"}`)).toBe(1);
    expect(after.get("flash_sale_snapshot_age_seconds")).toBeGreaterThanOrEqual(0);
    expect(after.get("flash_sale_connections_open")).toBeGreaterThanOrEqual(1);
    expect(after.get("flash_sale_body_cache_bytes")).toBeGreaterThan(3 * 500);
    expect(after.get("flash_sale_body_cache_reads_total")).toBeGreaterThanOrEqual(1);
    expect(after.has("process_cpu_user_seconds_total")).toBe(true);
    for (const name of ["event_streams_open", "event_streams_resuming", "event_streams_dropped_total"])
      expect([name, after.get(`flash_sale_${name}`)]).toEqual([name, 0]);
    // Every label value is one of a fixed list: no path, query or key among them.
    for (const name of after.keys()) expect(name).not.toMatch(/evil|apikey|xxxx/);
  });

  it("shows the event streams open and resuming, and the bytes they hold unsent", async () => {
    // A client that resumes from before the standard catalog's events and does not read: its stream stays open.
    const res = await fetch(api.url + withKey(api, "/v1/events"), {
      headers: { "Last-Event-ID": `${T0 - 2 * D}.1.AAAAAAAAAAAAAAAA` },
    });
    expect(res.status).toBe(200);
    const during = await scrape();
    expect(during.get("flash_sale_event_streams_open")).toBe(1);
    expect(during.get("flash_sale_event_unsent_bytes")).toBeGreaterThanOrEqual(0);
    await res.body!.cancel();
    await poll(() => api.handler.stats().events.streams === 0);
    expect((await scrape()).get("flash_sale_event_streams_open")).toBe(0);
  });

  it("counts reloads with their result", async () => {
    const before = await scrape();
    await api.handler.reload();
    const after = await scrape();
    expect(
      (after.get('flash_sale_reloads_total{result="success"}') ?? 0) -
        (before.get('flash_sale_reloads_total{result="success"}') ?? 0),
    ).toBe(1);
    expect(after.get("flash_sale_last_reload_timestamp_seconds")).toBeGreaterThan(0);
  });
});

describe("/metrics in the request log", () => {
  it("is logged once it is sent, with the bytes it sent (it was logged as a 200 of 0 bytes before being rendered)", async () => {
    const entries: RequestLog[] = [];
    const logged = await startTestApi(undefined, { metricsToken: TOKEN, log: (e) => entries.push(e) });
    try {
      const res = await logged.get("/metrics", { headers: { Authorization: `Bearer ${TOKEN}` } });
      const sent = Buffer.byteLength(await res.text());
      const entry = entries.find((e) => e.path === "/metrics");
      expect(entry).toMatchObject({ status: 200, bytes: sent });
      expect(sent).toBeGreaterThan(0);
    } finally {
      await logged.close();
    }
  });
});

describe("/metrics without a metrics token", () => {
  it("is a 404: metrics are off", async () => {
    const plain = await startTestApi();
    try {
      const res = await plain.get("/metrics", { headers: { Authorization: `Bearer ${TOKEN}` } });
      expect(res.status).toBe(404);
      expect(plain.handler.metrics).toBeNull();
    } finally {
      await plain.close();
    }
  });
});
