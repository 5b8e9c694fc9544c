// createHandler(options) -> (req, res): serves a snapshot from memory after the API-key check, picking each body by the clock.
import type { IncomingMessage, ServerResponse } from "node:http";
// The module's binding rather than the global (a getter on globalThis): read twice a request.
import { performance } from "node:perf_hooks";
import { ApiError, describeError, notFound, toApiError } from "../errors.ts";
import { BodyCache } from "../snapshot/body-cache.ts";
import type { LoadedSnapshot } from "../snapshot/load.ts";
import { closeUnusedPacks, loadSnapshot, SnapshotError } from "../snapshot/load.ts";
import { createAdmission } from "./admission/admission.ts";
import type { Admitted, Gate, RequestInfo } from "./admission/admission.ts";
import type { Handler, HandlerOptions } from "./handler-types.ts";
import { createCompressor } from "./bodies/compressor.ts";
import type { CompressionKind } from "./bodies/compressor.ts";
import { sendDocument } from "./endpoints/documents.ts";
import { sendKeyCheck } from "./endpoints/edge-key.ts";
import type { Found } from "./bodies/response-body.ts";
import { createVariants } from "./bodies/variants.ts";
import {
  DEFAULT_BODY_CACHE_BYTES,
  DEFAULT_EDGE_KEY_TTL,
  DEFAULT_MAX_AGE,
  DEFAULT_VARIANT_CACHE_BYTES,
} from "../config/defaults.ts";
import type { KeyRing } from "./admission/api-key-check.ts";
import { loadKeyRing } from "./admission/api-key-check.ts";
import { pathOf, redacted, redactPath } from "./admission/logged-path.ts";
import { bearerCheck, checkRequest, jsonpOf } from "./admission/request-guards.ts";
import { createResources, Missing } from "./bodies/resources.ts";
import { createMetrics } from "./endpoints/metrics.ts";
import { ROUTE_INDEX } from "../api/routing.ts";
import type { Metrics } from "./endpoints/metrics.ts";
import { sendJson, sendProblem, sendRepresentation, sendText } from "./bodies/respond.ts";
import { health } from "./endpoints/health.ts";
import { searchBody } from "./endpoints/search.ts";
import { createEventHub } from "./events/hub.ts";
import { createCalendarFeeds } from "./endpoints/calendar-feeds.ts";
import { sendUsage } from "./endpoints/usage-json.ts";

/** How long a reload waits before closing the packs only the snapshot it replaced used (no request reads them then). */
const PACK_CLOSE_DELAY_MS = 30_000;

/** Everything one request reads, swapped as one object so a request never sees two snapshots. */
interface State {
  snapshot: LoadedSnapshot | null;
  resources: ReturnType<typeof createResources> | null;
  /** Admission under this state's keys and paths (and the request targets it remembers). */
  gate: Gate;
}

const OTHER_ROUTE = ROUTE_INDEX.other;

export type { ErrorLog, Handler, HandlerOptions, RequestLog } from "./handler-types.ts";

/** Loads the snapshot and keys (failing loudly if either is missing or corrupt) and returns the request handler. */
export async function createHandler(options: HandlerOptions): Promise<Handler> {
  const clock = options.clock ?? Date.now;
  const usage = options.usage ?? null;
  const meter = usage?.meter ?? null;
  const maxAge = options.maxAge ?? DEFAULT_MAX_AGE;
  const edgeKeyTtl = options.edgeKeyTtl ?? DEFAULT_EDGE_KEY_TTL;
  // Metrics are made below, once the state they read exists; a failure before then is only logged.
  let countFailure: ((kind: CompressionKind) => void) | null = null;
  const compressor = createCompressor(options.compressSlots, {
    onFailure: (kind, err) => {
      countFailure?.(kind);
      options.onError?.({
        time: new Date().toISOString(),
        level: "warn",
        event: `${kind}_failed`,
        error: describeError(err),
      });
    },
  });
  const variants = createVariants(compressor, options.variantCacheBytes ?? DEFAULT_VARIANT_CACHE_BYTES);
  const gate = createAdmission(options);
  const feeds = createCalendarFeeds({ refreshSeconds: maxAge, clock, scheduler: options.events?.scheduler });
  const stateOf = (snapshot: LoadedSnapshot | null, keys: KeyRing): State => {
    const resources = snapshot ? createResources(snapshot, compressor) : null;
    resources?.warm(Math.floor(clock() / 1000));
    if (resources && snapshot) feeds.warm(resources, snapshot);
    return { snapshot, resources, gate: gate(keys, resources) };
  };

  const bodies = new BodyCache(options.bodyCacheBytes ?? DEFAULT_BODY_CACHE_BYTES);
  let initial: LoadedSnapshot | null = null;
  try {
    initial = await loadSnapshot(options.dataDir, { bodies });
  } catch (err) {
    if (!(options.waitForSnapshot && err instanceof SnapshotError)) throw err;
  }
  let state = stateOf(initial, await loadKeyRing(options.keysFile));
  // Its streams are capped per client address, named as admission names it (behind trustProxy's proxies too).
  const events = createEventHub(clock, { trustProxy: options.trustProxy, ...options.events });
  events.swap(state.snapshot);
  const metrics = options.metricsToken
    ? createMetrics({
        snapshot: () =>
          state.snapshot ? { id: state.snapshot.id, builtAtMs: Date.parse(state.snapshot.manifest.built_at) } : null,
        now: clock,
        ...(options.limits?.shared !== undefined ? { limitsShared: () => options.limits!.shared === true } : {}),
        bodies: () => ({ bytes: bodies.bytes, reads: bodies.reads }),
        ...(options.usage?.stats ? { usage: options.usage.stats } : {}),
        events: () => events.stats(),
      })
    : null;
  const metricsAuth = options.metricsToken ? bearerCheck(options.metricsToken) : null;
  if (metrics) countFailure = (kind) => metrics.compressionFailure(kind);

  /** The body of an admitted request at `now`. */
  const find = (s: State, a: Admitted, now: number): Found | Missing => {
    // An admitted request has a snapshot: the gate of a state without one admits nothing.
    if (!a.search) return s.resources!.at(a.path, a.states!, now);
    if (!metrics) return searchBody(s.snapshot!, a.search, now);
    const started = performance.now();
    const found = searchBody(s.snapshot!, a.search, now);
    metrics.search((performance.now() - started) / 1000);
    return found;
  };

  /**
   * GET /metrics: the exposition to the holder of the token, sent once rendered; resolves with [status, bytes] then
   * (so that its log line and its own count say what was sent).
   */
  const sendMetrics = (req: IncomingMessage, res: ServerResponse, info: RequestInfo): Promise<[number, number]> => {
    if (!metrics || !metricsAuth) throw notFound();
    if (!metricsAuth(req.headers.authorization))
      throw new ApiError(401, "unauthorized", "metrics need Authorization: Bearer <the metrics token>", {
        "WWW-Authenticate": 'Bearer realm="metrics"',
      });
    return metrics.render().then(
      ({ contentType, body }) => sendText(req, res, 200, contentType, body),
      (err: unknown) => {
        options.onError?.({
          time: new Date().toISOString(),
          level: "error",
          event: "metrics_failed",
          error: describeError(err),
        });
        return answerError(req, res, err, info, []);
      },
    );
  };

  let isoMs = -1;
  let iso = "";
  /** A request log's time (wall clock): made once a millisecond rather than once a request (0.57 us each here). */
  const isoAt = (ms: number) => (ms === isoMs ? iso : ((isoMs = ms), (iso = new Date(ms).toISOString())));

  /** Answers `err` (an ApiError, or anything thrown: a 500, logged): returns [status, bytes]. */
  const answerError = (
    req: IncomingMessage,
    res: ServerResponse,
    err: unknown,
    info: RequestInfo,
    headers: string[],
  ): [number, number] => {
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
      options.onError?.({
        time: new Date().toISOString(),
        level: "error",
        event: "request_failed",
        method: req.method ?? "",
        path: redactPath(info.path || pathOf(req.url)),
        error: describeError(err),
      });
    return sendProblem(req, res, error, headers, jsonpOf(info.query));
  };

  /** The end of a request: its count in the metrics and its log line, with one clock reading for both. */
  const done = (
    req: IncomingMessage,
    info: RequestInfo,
    started: number,
    nowMs: number,
    [status, bytes]: [number, number],
  ): void => {
    sent = bytes;
    const ended = metrics || options.log ? performance.now() : 0;
    if (metrics) metrics.request(info.route, status, bytes, (ended - started) / 1000);
    if (meter !== null && info.key !== undefined) meter.count(info.key, status, bytes, nowMs);
    if (options.log) {
      // Wall-clock time, even when the handler runs on an injected clock: the request's arrival, read once.
      const time = isoAt(clock === Date.now ? nowMs : Date.now());
      const method = req.method ?? "";
      const path = redacted(info.path);
      const ms = Math.round((ended - started) * 1000) / 1000;
      // Two literal shapes rather than a spread (half the cost); no key property at all without a valid key.
      options.log(
        info.key ? { time, method, path, status, bytes, ms, key: info.key } : { time, method, path, status, bytes, ms },
      );
    }
  };

  /** The body bytes of the response just answered (for the handler's return), set by `done`. */
  let sent = 0;
  const answer = (req: IncomingMessage, res: ServerResponse): void => {
    const started = options.log || metrics ? performance.now() : 0;
    const s = state; // one snapshot for the whole request, even if a reload swaps state meanwhile
    const info: RequestInfo = { path: "", route: OTHER_ROUTE, key: undefined, query: null };
    const headers: string[] = [];
    const nowMs = clock();
    let result: [number, number] | undefined;
    /** A response sent once something is made in the background (the metrics): logged when it is sent. */
    let later: Promise<[number, number]> | null = null;
    try {
      checkRequest(req);
      const a = s.gate.admit(req, nowMs, headers, info);
      if (a instanceof ApiError) {
        result = answerError(req, res, a, info, headers);
        return;
      }
      if (a === "health") {
        result = sendJson(req, res, s.snapshot ? 200 : 503, health(s.snapshot, nowMs));
        return;
      }
      if (a === "document") {
        result = sendDocument(req, res, s.snapshot, info.path, maxAge);
        return;
      }
      if (a === "metrics") {
        later = sendMetrics(req, res, info);
        return;
      }
      if (a === "edge") {
        result = sendKeyCheck(req, res, s.gate.checkKey(req, info.query!, nowMs), nowMs, edgeKeyTtl);
        return;
      }
      if (a.answer === "stream") {
        // A long-lived response: none of the caching, ETag or compression below applies.
        result = events.open(req, res, a, headers);
        return;
      }
      if (a.answer === "calendar") {
        const { rep, ttl } = feeds.answer(s.resources!, s.snapshot!, a.path, a.affid, nowMs);
        result = sendRepresentation(req, res, rep, { ttl, headers });
        return;
      }
      if (a.answer === "usage") {
        const burst = s.gate.burstOf(a.credential, nowMs);
        later = sendUsage(req, res, a, burst, usage?.figures ?? null, headers).catch((err: unknown) =>
          answerError(req, res, err, info, headers),
        );
        return;
      }
      const found = find(s, a, Math.floor(nowMs / 1000));
      const { changesAt } = found;
      const ttl =
        changesAt === null ? maxAge : Math.max(0, Math.min(maxAge, Math.floor((changesAt * 1000 - nowMs) / 1000)));
      if (found instanceof Missing) {
        result = sendProblem(req, res, found.error, headers, jsonpOf(info.query), ttl);
        return;
      }
      const { body, gzip, perRequest } = found;
      result = sendRepresentation(
        req,
        res,
        variants.represent({ body, changesAt, gzip, perRequest }, a.affid, a.callback),
        { ttl, headers },
      );
    } catch (err) {
      result = answerError(req, res, err, info, headers);
    } finally {
      if (later) void later.then((r) => done(req, info, started, nowMs, r));
      else done(req, info, started, nowMs, result!);
    }
  };
  const handler = ((req: IncomingMessage, res: ServerResponse): number => {
    sent = 0;
    answer(req, res);
    return sent;
  }) as Handler;

  handler.snapshot = () => {
    if (!state.snapshot) throw new SnapshotError("no snapshot is loaded");
    return state.snapshot;
  };
  handler.stats = () => ({
    variantBytes: variants.cache.bytes + variants.templates.bytes,
    variants: variants.cache.size,
    admittedTargets: state.gate.remembered,
    compressing: compressor.busy,
    bodyBytes: bodies.bytes,
    bodies: bodies.size,
    bodyReads: bodies.reads,
    events: events.stats(),
    calendars: feeds.stats(),
  });
  handler.endStreams = () => events.close();
  handler.idle = async () => {
    await Promise.all([variants.templates.idle(), feeds.idle()]);
  };
  (handler as { metrics: Metrics | null }).metrics = metrics;
  handler.reload = async () => {
    try {
      const changed = await reload();
      metrics?.reload(true);
      return changed;
    } catch (err) {
      metrics?.reload(false);
      throw err;
    }
  };
  const reload = async () => {
    const keys = await loadKeyRing(options.keysFile);
    let snapshot: LoadedSnapshot;
    try {
      snapshot = await loadSnapshot(options.dataDir, { previous: state.snapshot, bodies });
    } catch (err) {
      // The new keys hold even when the snapshot is refused: a key revoked as a broken snapshot is published is revoked.
      state = { ...state, gate: gate(keys, state.resources) };
      throw err;
    }
    const old = state.snapshot;
    const snapshotChanged = snapshot.id !== old?.id;
    // New keys (a key may be revoked) or a new snapshot: a new gate, so nothing admitted under the old state is kept.
    state = snapshotChanged ? stateOf(snapshot, keys) : { ...state, gate: gate(keys, state.resources) };
    if (snapshotChanged) events.swap(snapshot);
    // Requests read bodies synchronously, so none reads the replaced snapshot's packs once this turn is over; the
    // wait covers the sale list composed ahead of time (resources.ts) and leaves room to spare.
    if (old && old !== state.snapshot) {
      const served = state.snapshot;
      setTimeout(() => closeUnusedPacks(old, served), PACK_CLOSE_DELAY_MS).unref();
    }
    return { snapshotChanged };
  };
  return handler;
}
