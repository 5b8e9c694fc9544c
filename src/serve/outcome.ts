// The end of every request, whatever answered it: an error turned into its response (a 500 logged), and the request
// counted in the metrics and the key's usage and written to the request log, with one clock reading for all three.
import type { IncomingMessage, ServerResponse } from "node:http";
// The module's binding rather than the global (a getter on globalThis): read twice a request.
import { performance } from "node:perf_hooks";
import { ApiError, errorLine, toApiError } from "../errors.ts";
import type { RequestInfo } from "./admission/admission.ts";
import { pathOf, redacted, redactPath } from "./admission/logged-path.ts";
import { jsonpOf } from "./admission/request-guards.ts";
import { sendProblem } from "./bodies/respond.ts";
import type { Metrics } from "./metrics-registry.ts";
import type { HandlerOptions } from "./handler-types.ts";
import type { Sent } from "./responder.ts";

/** Returns the request's error answer and its end (metrics, usage, log line), under `options`. */
export function createOutcome(options: HandlerOptions, clock: () => number, metrics: Metrics | null) {
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
