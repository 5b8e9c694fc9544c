// Prometheus metrics: counted on the request path in typed arrays (a few increments a request), turned into
// prom-client metrics only when /metrics is scraped. No label takes a client-chosen value: routes, statuses and
// reasons are fixed lists, so the number of series is fixed too.
import cluster from "node:cluster";
import type { Server } from "node:http";
import client from "prom-client";
import { ROUTE_CLASSES as ROUTES } from "../api/endpoints.ts";
import type { RouteIndex } from "../api/routing.ts";
import type { CompressionKind } from "./bodies/compressor.ts";

const COMPRESSION_KINDS: readonly CompressionKind[] = ["brotli", "gzip_template", "brotli_template"];

/** Statuses counted by their own label; any other is counted as "other". */
const STATUSES = [200, 304, 400, 401, 404, 405, 408, 414, 429, 431, 500, 503] as const;
const STATUS_INDEX = new Int8Array(600).fill(STATUSES.length);
STATUSES.forEach((s, i) => (STATUS_INDEX[s] = i));
const STATUS_LABELS = [...STATUSES.map(String), "other"];

/** Latency buckets, seconds: from a remembered target's 50 us to a slow client's second. */
const BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

/** Why a request was refused before its resource was looked up. */
const REJECTIONS = [
  "api_key_missing",
  "api_key_invalid",
  "api_key_suspended",
  "address_locked_out",
  "rate_limited",
] as const;
type Rejection = (typeof REJECTIONS)[number];

/** A histogram kept as bucket counts (not cumulative), a sum and a count, per series. */
class Histogram {
  readonly counts: Float64Array;
  readonly sums: Float64Array;
  constructor(series: number) {
    this.counts = new Float64Array(series * (BUCKETS.length + 1));
    this.sums = new Float64Array(series);
  }

  observe(series: number, seconds: number): void {
    let b = 0;
    while (b < BUCKETS.length && seconds > BUCKETS[b]!) b++;
    this.counts[series * (BUCKETS.length + 1) + b]!++;
    this.sums[series]! += seconds;
  }

  /** prom-client values for series `s` with `labels`: cumulative buckets, +Inf, sum and count. */
  values(name: string, s: number, labels: Record<string, string>): client.MetricValueWithName<string>[] {
    const out: client.MetricValueWithName<string>[] = [];
    let cumulative = 0;
    for (let b = 0; b <= BUCKETS.length; b++) {
      cumulative += this.counts[s * (BUCKETS.length + 1) + b]!;
      out.push({
        metricName: `${name}_bucket`,
        labels: { ...labels, le: b < BUCKETS.length ? String(BUCKETS[b]) : "+Inf" },
        value: cumulative,
      });
    }
    out.push(
      { metricName: `${name}_sum`, labels, value: this.sums[s]! },
      { metricName: `${name}_count`, labels, value: cumulative },
    );
    return out;
  }
}

/** What the metrics read of the handler when scraped. */
export interface MetricsSource {
  /** The snapshot served: its ID and build time (epoch ms), or null. */
  snapshot(): { id: string; builtAtMs: number } | null;
  /** The clock, epoch ms. */
  now(): number;
  /** With REDIS_URL: whether the rate limits are shared through Redis now (false while it cannot be reached). */
  limitsShared?: () => boolean;
  /** The body cache: bytes held, and bodies read from the packs so far (each a miss). */
  bodies?: () => { bytes: number; reads: number };
  /** Usage per key (src/usage/): rows not yet handed over, requests dropped past the bound, hand-overs and failures. */
  usage?: () => { rows: number; dropped: number; batches: number; failures: number };
  /**
   * GET /v1/events (src/serve/events/): streams open and resuming, bytes held unsent, streams dropped so far, and
   * streams refused so far by the cap that was full.
   */
  events?: () => {
    streams: number;
    replaying: number;
    unsentBytes: number;
    dropped: number;
    refused: Record<"server" | "key" | "account" | "address", number>;
  };
}

export interface Metrics {
  /** One answered request: its route class, status, bytes sent and time taken. */
  request(route: RouteIndex, status: number, bytes: number, seconds: number): void;
  rejection(reason: Rejection): void;
  /** Time the search engine took for one search. */
  search(seconds: number): void;
  /** A reload of the snapshot and keys, and whether it succeeded. */
  reload(ok: boolean): void;
  /** A background compression that failed (the body goes out as it was). */
  compressionFailure(kind: CompressionKind): void;
  /** Counts the server's open connections when scraped. */
  watch(server: Server): void;
  /** The exposition: content type and text. */
  render(): Promise<{ contentType: string; body: string }>;
}

const PREFIX = "flash_sale_";

/** A registrar of series whose values are read when the registry is scraped. */
type Custom = (
  name: string,
  help: string,
  type: string,
  values: () => client.MetricValueWithName<string>[] | Promise<client.MetricValueWithName<string>[]>,
) => void;

/** Registers, on `registry`, series read only when scraped (from counters kept outside prom-client). */
function seriesOf(registry: client.Registry): Custom {
  return (name, help, type, values) => {
    registry.registerMetric({
      name: PREFIX + name,
      get: async () => ({ name: PREFIX + name, help, type, values: await values(), aggregator: "sum" }),
    } as unknown as client.Metric);
  };
}

/** The series read from the rest of the server when scraped: the snapshot, the shared limits, bodies, usage, events. */
function registerSourceSeries(custom: Custom, source: MetricsSource): void {
  custom("snapshot_info", "The snapshot served (value 1; its ID as a label).", "gauge", () => {
    const s = source.snapshot();
    return s ? [{ labels: { snapshot: s.id }, value: 1 }] : [];
  });
  custom("snapshot_age_seconds", "Seconds since the snapshot served was built.", "gauge", () => {
    const s = source.snapshot();
    return s ? [{ labels: {}, value: Math.max(0, (source.now() - s.builtAtMs) / 1000) }] : [];
  });
  const limitsShared = source.limitsShared;
  if (limitsShared) {
    custom(
      "rate_limits_shared",
      "1 while the rate limits are shared through Redis (REDIS_URL); 0 while it cannot be reached and each process limits on its own.",
      "gauge",
      () => [{ labels: {}, value: limitsShared() ? 1 : 0 }],
    );
  }
  const bodies = source.bodies;
  if (bodies) {
    custom("body_cache_bytes", "Bytes of resource bodies held in memory (at most BODY_CACHE_MB).", "gauge", () => [
      { labels: {}, value: bodies().bytes },
    ]);
    custom(
      "body_cache_reads_total",
      "Resource bodies read from the packs because the body cache did not hold them.",
      "counter",
      () => [{ labels: {}, value: bodies().reads }],
    );
  }
  const usage = source.usage;
  if (usage) {
    custom(
      "usage_rows_pending",
      "Usage rows (one key's minute) counted and not yet in the usage store; grows while it cannot be reached, up to USAGE_BUFFER_ROWS.",
      "gauge",
      () => [{ labels: {}, value: usage().rows }],
    );
    custom(
      "usage_dropped_requests_total",
      "Requests whose usage was dropped because the store could not be reached for longer than the buffer holds (the oldest minutes go first).",
      "counter",
      () => [{ labels: {}, value: usage().dropped }],
    );
    custom("usage_handovers_total", "Batches of usage handed to the usage store, by result.", "counter", () => [
      { labels: { result: "ok" }, value: usage().batches },
      { labels: { result: "failed" }, value: usage().failures },
    ]);
  }
  const events = source.events;
  if (events) {
    custom("event_streams_open", "GET /v1/events streams open now (at most 10,000 a process).", "gauge", () => [
      { labels: {}, value: events().streams },
    ]);
    custom(
      "event_streams_resuming",
      "Event streams still being sent the events they missed (Last-Event-ID), as their clients read them.",
      "gauge",
      () => [{ labels: {}, value: events().replaying }],
    );
    custom(
      "event_unsent_bytes",
      "Bytes the event streams hold in this process that their clients have not taken yet (kernel buffers aside).",
      "gauge",
      () => [{ labels: {}, value: events().unsentBytes }],
    );
    custom(
      "event_streams_dropped_total",
      "Event streams dropped because their clients stopped reading.",
      "counter",
      () => [{ labels: {}, value: events().dropped }],
    );
    custom(
      "event_streams_refused_total",
      "Event streams refused because a cap was full, by cap: server (a 503), key, account or address (a 429).",
      "counter",
      () => Object.entries(events().refused).map(([cap, value]) => ({ labels: { cap }, value })),
    );
  }
}

/** Metrics in a registry of their own, with node's default process metrics. */
export function createMetrics(source: MetricsSource): Metrics {
  const registry = new client.Registry();
  // Under WORKERS=N each worker counts its own requests: every series says which worker answered the scrape.
  if (cluster.worker) registry.setDefaultLabels({ worker: String(cluster.worker.id) });
  client.collectDefaultMetrics({ register: registry });
  const requests = new Float64Array(ROUTES.length * STATUS_LABELS.length);
  const bytes = new Float64Array(ROUTES.length);
  const latency = new Histogram(ROUTES.length);
  const searches = new Histogram(1);
  const rejections = new Float64Array(REJECTIONS.length);
  const reloads = new Float64Array(2);
  const compressionFailures = new Map<CompressionKind, number>(COMPRESSION_KINDS.map((k) => [k, 0]));
  let lastReloadMs = 0;
  let servers: Server[] = [];

  const custom = seriesOf(registry);
  custom("requests_total", "Requests answered, by route class and status.", "counter", () =>
    ROUTES.flatMap((route, r) =>
      STATUS_LABELS.flatMap((status, s) =>
        requests[r * STATUS_LABELS.length + s]
          ? [{ labels: { route, status }, value: requests[r * STATUS_LABELS.length + s]! }]
          : [],
      ),
    ),
  );
  custom(
    "request_duration_seconds",
    "Time from a request's arrival at the handler to its response, by route class.",
    "histogram",
    () => ROUTES.flatMap((route, r) => latency.values(PREFIX + "request_duration_seconds", r, { route })),
  );
  custom("response_bytes_total", "Body bytes sent, by route class.", "counter", () =>
    ROUTES.map((route, r) => ({ labels: { route }, value: bytes[r]! })),
  );
  custom(
    "rejections_total",
    "Requests refused before their resource was looked up (401 and 429), by reason.",
    "counter",
    () => REJECTIONS.map((reason, i) => ({ labels: { reason }, value: rejections[i]! })),
  );
  custom("search_duration_seconds", "Time the search engine took per search.", "histogram", () =>
    searches.values(PREFIX + "search_duration_seconds", 0, {}),
  );
  custom("reloads_total", "Reloads of the snapshot and keys, by result.", "counter", () => [
    { labels: { result: "success" }, value: reloads[0]! },
    { labels: { result: "failure" }, value: reloads[1]! },
  ]);
  custom(
    "compression_failures_total",
    "Background compressions that failed (a body's brotli, a list's gzip or brotli template), by kind; the bodies went out as they were.",
    "counter",
    () => COMPRESSION_KINDS.map((kind) => ({ labels: { kind }, value: compressionFailures.get(kind)! })),
  );
  custom(
    "last_reload_timestamp_seconds",
    "When the last reload (of either result) ended, epoch seconds; 0 before any.",
    "gauge",
    () => [{ labels: {}, value: lastReloadMs / 1000 }],
  );
  registerSourceSeries(custom, source);
  custom("connections_open", "Client connections open now.", "gauge", async () => {
    const counts = await Promise.all(
      servers.map((s) => new Promise<number>((resolve) => s.getConnections((err, n) => resolve(err ? 0 : n)))),
    );
    return [{ labels: {}, value: counts.reduce((a, b) => a + b, 0) }];
  });

  return {
    request(route, status, sent, seconds) {
      requests[route * STATUS_LABELS.length + STATUS_INDEX[status < 600 ? status : 0]!]!++;
      bytes[route]! += sent;
      latency.observe(route, seconds);
    },
    rejection(reason) {
      rejections[REJECTIONS.indexOf(reason)]!++;
    },
    search(seconds) {
      searches.observe(0, seconds);
    },
    reload(ok) {
      reloads[ok ? 0 : 1]!++;
      lastReloadMs = source.now();
    },
    compressionFailure(kind) {
      compressionFailures.set(kind, compressionFailures.get(kind)! + 1);
    },
    watch(server) {
      servers = [...servers, server];
      server.once("close", () => (servers = servers.filter((s) => s !== server)));
    },
    async render() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}
