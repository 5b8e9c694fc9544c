// GET /metrics: the Prometheus exposition of the counters the server keeps (src/serve/metrics-registry.ts), to the
// holder of the metrics token only; a 404 when metrics are off.
import { createHash, timingSafeEqual } from "node:crypto";
import { ApiError, errorLine, notFound } from "../../errors.ts";
import { sendText } from "../bodies/respond.ts";
import type { ResponderModule } from "../responder.ts";

/**
 * GET /metrics's responder: the exposition to the holder of the metrics token (a 404 when metrics are off), sent once
 * rendered; its promise resolves with what was sent then (so that its log line and its own count say so). A failed
 * rendering is logged, then answered by the handler as every failure is.
 */
export const responder: ResponderModule["responder"] = ({ metrics, options }) => {
  const authorized = options.metricsToken ? bearerCheck(options.metricsToken) : null;
  return (req, res) => {
    if (!metrics || !authorized) throw notFound();
    if (!authorized(req.headers.authorization))
      throw new ApiError(401, "unauthorized", "metrics need Authorization: Bearer <the metrics token>", {
        "WWW-Authenticate": 'Bearer realm="metrics"',
      });
    return metrics.render().then(
      ({ contentType, body }) => sendText(req, res, 200, contentType, body),
      (err: unknown) => {
        options.onError?.(errorLine("error", "metrics_failed", err));
        throw err;
      },
    );
  };
};

/** Checks an Authorization header against `Bearer <token>` in constant time. */
function bearerCheck(token: string): (header: string | undefined) => boolean {
  const expected = createHash("sha256").update(`Bearer ${token}`).digest();
  return (header) => header !== undefined && timingSafeEqual(createHash("sha256").update(header).digest(), expected);
}
