// createHandler(options) -> (req, res): serves a snapshot from memory after the API-key check, picking each body by
// the clock. Wiring only: admission (admission/) says what a request asks for, the endpoint table's responder for it
// (endpoints/<answer>.ts, responder.ts) answers, and outcome.ts counts and logs it.
import type { IncomingMessage, ServerResponse } from "node:http";
import { ENDPOINTS } from "../api/endpoints.ts";
import { ROUTE_INDEX } from "../api/routing.ts";
import { DEFAULT_MAX_AGE, DEFAULT_VARIANT_CACHE_BYTES } from "../config/defaults.ts";
import { ApiError, errorLine } from "../errors.ts";
import { SnapshotError } from "../snapshot/load.ts";
import type { RequestInfo } from "./admission/admission.ts";
import { checkRequest } from "./admission/request-guards.ts";
import { createCompressor } from "./bodies/compressor.ts";
import { sendPreflight } from "./bodies/respond.ts";
import type { CompressionKind } from "./bodies/compressor.ts";
import { createVariants } from "./bodies/variants.ts";
import { createCalendarFeeds } from "./endpoints/calendar-feeds.ts";
import { createMetrics } from "./metrics-registry.ts";
import { createEventHub } from "./events/hub.ts";
import type { Handler, HandlerOptions } from "./handler-types.ts";
import { createOutcome } from "./outcome.ts";
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
  const responders = await loadResponders(
    ENDPOINTS.map((e) => e.answer),
    services,
  );

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
