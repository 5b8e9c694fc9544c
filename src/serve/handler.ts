// createHandler(options) -> (req, res): serves a snapshot from memory after the API-key check, picking each body by
// the clock. Wiring: admission (admission/) says what a request asks for, the endpoint table's responder for it
// (endpoints/<answer>.ts, responder.ts) answers; and the end of every request, here (createOutcome): an error turned
// into its response, the request counted in the metrics and the key's usage and written to the request log.
import type { IncomingMessage, ServerResponse } from "node:http";
// The module's binding rather than the global (a getter on globalThis): read twice a request.
import { performance } from "node:perf_hooks";
import { ENDPOINTS } from "../api/endpoints.ts";
import { ROUTE_INDEX } from "../api/routing.ts";
import { DEFAULT_MAX_AGE, DEFAULT_VARIANT_CACHE_BYTES } from "../config/defaults.ts";
import { ApiError, errorLine, toApiError } from "../errors.ts";
import { SnapshotError } from "../snapshot/load.ts";
import { checkRequest } from "./admission/admission.ts";
import type { RequestInfo } from "./admission/admission.ts";
import { createCompressor } from "./bodies/compressor.ts";
import { jsonpOf, sendPreflight, sendProblem } from "./bodies/respond.ts";
import type { CompressionKind } from "./bodies/compressor.ts";
import { createVariants } from "./bodies/variants.ts";
import { createCalendarFeeds } from "./endpoints/calendar-feeds.ts";
import { createMetrics } from "./metrics-registry.ts";
import type { Metrics } from "./metrics-registry.ts";
import { createEventHub } from "./events/hub.ts";
import type { Handler, HandlerOptions } from "./handler-types.ts";
import { loadResponders } from "./responder.ts";
import type { Sent } from "./responder.ts";
import { loadState } from "./snapshot-state.ts";

export type { ErrorLog, Handler, HandlerOptions, RequestLog } from "./handler-types.ts";

const OTHER_ROUTE = ROUTE_INDEX.other;

/** Loads the snapshot and keys (failing loudly if either is missing or corrupt) and returns the request handler. */
export async function createHandler(options: HandlerOptions): Promise<Handler> {
  const clock = options.clock ?? Date.now;
  const maxAge = options.maxAge ?? DEFAULT_MAX_AGE;
  // Metrics are made once the state they read exists; a compression failure before then is only logged.
  let countFailure: ((kind: CompressionKind) => void) | null = null;
  const compressor = createCompressor(options.compressSlots, {
    onFailure: (kind, err) => {
      countFailure?.(kind);
      options.onError?.(errorLine("warn", `${kind}_failed`, err));
    },
  });
  const variants = createVariants(compressor, options.variantCacheBytes ?? DEFAULT_VARIANT_CACHE_BYTES);
  const feeds = createCalendarFeeds({ refreshSeconds: maxAge, clock, scheduler: options.events?.scheduler });
  const state = await loadState(options, { clock, compressor, feeds });
  // Its streams are capped per client address, named as admission names it (behind trustProxy's proxies too).
  const events = createEventHub(clock, { trustProxy: options.trustProxy, ...options.events });
  state.attach(events);
  const metrics = options.metricsToken ? createMetrics(metricsSource(options, state, clock, events)) : null;
  if (metrics) countFailure = (kind) => metrics.compressionFailure(kind);
  const { answerError, start, done } = createOutcome(options, clock, metrics);
  const services = { options, maxAge, variants, feeds, events, metrics };
  const responders = await loadResponders(new Set(ENDPOINTS.map((e) => e.answer)), services);

  const handler = ((req: IncomingMessage, res: ServerResponse): number => {
    const started = start();
    const s = state.current; // one snapshot for the whole request, even if a reload swaps state meanwhile
    const info: RequestInfo = { path: "", route: OTHER_ROUTE, key: undefined, query: null };
    const headers: string[] = [];
    const nowMs = clock();
    let result: Sent | Promise<Sent>;
    try {
      if (checkRequest(req)) result = sendPreflight(res);
      else {
        const a = s.gate.admit(req, nowMs, headers, info);
        if (a instanceof ApiError) result = answerError(req, res, a, info, headers);
        else if (typeof a === "string") result = responders[a](req, res, s, null, info, headers, nowMs);
        else result = responders[a.answer](req, res, s, a, info, headers, nowMs);
      }
    } catch (err) {
      result = answerError(req, res, err, info, headers);
    }
    if (Array.isArray(result)) {
      done(req, info, started, nowMs, result);
      return result[1];
    }
    // Sent once something is made in the background (metrics, a key's usage): logged when it is sent.
    void result
      .catch((err: unknown) => answerError(req, res, err, info, headers))
      .then((sent) => done(req, info, started, nowMs, sent));
    return 0;
  }) as Handler;

  handler.snapshot = () => {
    if (!state.current.snapshot) throw new SnapshotError("no snapshot is loaded");
    return state.current.snapshot;
  };
  handler.stats = () => ({
    variantBytes: variants.cache.bytes + variants.templates.bytes,
    variants: variants.cache.size,
    admittedTargets: state.current.gate.remembered,
    compressing: compressor.busy,
    bodyBytes: state.bodies.bytes,
    bodies: state.bodies.size,
    bodyReads: state.bodies.reads,
    events: events.stats(),
    calendars: feeds.stats(),
  });
  handler.endStreams = () => events.close();
  handler.idle = async () => void (await Promise.all([variants.templates.idle(), feeds.idle()]));
  (handler as { metrics: typeof metrics }).metrics = metrics;
  handler.reload = () =>
    state.reload().then(
      (changed) => (metrics?.reload(true), changed),
      (err: unknown) => (metrics?.reload(false), Promise.reject(err as Error)),
    );
  return handler;
}

/** What the metrics read of the handler's state (createMetrics). */
function metricsSource(
  options: HandlerOptions,
  state: Awaited<ReturnType<typeof loadState>>,
  clock: () => number,
  events: ReturnType<typeof createEventHub>,
) {
  return {
    snapshot: () => {
      const s = state.current.snapshot;
      return s ? { id: s.id, builtAtMs: Date.parse(s.manifest.built_at) } : null;
    },
    now: clock,
    ...(options.limits?.shared !== undefined ? { limitsShared: () => options.limits!.shared === true } : {}),
    bodies: () => ({ bytes: state.bodies.bytes, reads: state.bodies.reads }),
    ...(options.usage?.stats ? { usage: options.usage.stats } : {}),
    events: () => events.stats(),
  };
}

/** Returns the request's error answer and its end (metrics, usage, log line), under `options`. */
function createOutcome(options: HandlerOptions, clock: () => number, metrics: Metrics | null) {
  const meter = options.usage?.meter ?? null;
  const log = options.log;
  /** Whether a request's duration is measured (for the metrics or the log). */
  const timed = log !== undefined || metrics !== null;

  let isoMs = -1;
  let iso = "";
  /** A request log's time (wall clock): made once a millisecond rather than once a request (0.57 us each here). */
  const isoAt = (ms: number) => (ms === isoMs ? iso : ((isoMs = ms), (iso = new Date(ms).toISOString())));

  /** Answers `err` (an ApiError, or anything thrown: a 500, logged). */
  const answerError = (
    req: IncomingMessage,
    res: ServerResponse,
    err: unknown,
    info: RequestInfo,
    headers: string[],
  ): Sent => {
    const error = toApiError(err);
    if (metrics && (error.status === 401 || error.status === 429))
      metrics.rejection(
        error.status === 429
          ? "rate_limited"
          : error.reason === "address_locked_out"
            ? "address_locked_out"
            : error.code === "api_key_missing" || error.code === "api_key_suspended"
              ? error.code
              : "api_key_invalid",
      );
    if (error.status >= 500 && !(err instanceof ApiError))
      options.onError?.(
        errorLine("error", "request_failed", err, {
          method: req.method ?? "",
          path: redactPath(info.path || pathOf(req.url)),
        }),
      );
    return sendProblem(req, res, error, headers, jsonpOf(info.query));
  };

  /** The start of a request's duration (0 when nothing measures it). */
  const start = () => (timed ? performance.now() : 0);

  /** The end of a request (arrived at `nowMs`, `started` by `start`): counted, metered and logged. */
  const done = (req: IncomingMessage, info: RequestInfo, started: number, nowMs: number, [status, bytes]: Sent) => {
    const ended = timed ? performance.now() : 0;
    if (metrics) metrics.request(info.route, status, bytes, (ended - started) / 1000);
    if (meter !== null && info.key !== undefined) meter.count(info.key, info.route, status, bytes, nowMs);
    if (log) {
      // Wall-clock time, even when the handler runs on an injected clock: the request's arrival, read once.
      const time = isoAt(clock === Date.now ? nowMs : Date.now());
      const method = req.method ?? "";
      const path = redacted(info.path);
      const ms = Math.round((ended - started) * 1000) / 1000;
      // Two literal shapes rather than a spread (half the cost); no key property at all without a valid key.
      log(
        info.key ? { time, method, path, status, bytes, ms, key: info.key } : { time, method, path, status, bytes, ms },
      );
    }
  };

  return { answerError, start, done };
}

// The path as a request's log line has it: never a key, even one sent in the path.

/** The path of a raw request target, for the log line of a request that failed before it was parsed. */
function pathOf(url: string | undefined): string {
  const path = (url ?? "").split("?")[0]!;
  return path.length > 256 ? `${path.slice(0, 256)}...` : path;
}

/** The path as logged: a run of 32 or more letters and digits may be a key sent in the wrong place, and is never logged. */
function redactPath(path: string): string {
  return path.replace(/[A-Za-z0-9]{32,}/g, "[redacted]");
}

/** redactPath, remembered for the paths requests repeat (at most REDACTED_MAX): a regex pass a request saved. */
function redacted(path: string): string {
  let r = redactedPaths.get(path);
  if (r === undefined) {
    if (redactedPaths.size >= REDACTED_MAX) redactedPaths.clear();
    redactedPaths.set(path, (r = redactPath(path)));
  }
  return r;
}
const redactedPaths = new Map<string, string>();
const REDACTED_MAX = 4_096;
