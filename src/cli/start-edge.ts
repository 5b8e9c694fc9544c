// EDGE_FRONTS for `npm run serve`: the fronts the server pushes key changes to (src/edge/), what it says of them
// (a JSON line on stderr when a front falls out of step or is in step again), and their metrics.
import cluster from "node:cluster";
import type { Config } from "../config/api-settings.ts";
import { DEFAULT_KEY_RATE_LIMIT } from "../config/defaults.ts";
import { createFronts } from "../edge/fronts.ts";
import { addEdgeMetrics } from "../edge/metrics.ts";
import { createEdgePusher } from "../edge/pusher.ts";
import type { EdgeEvent, EdgePusher } from "../edge/pusher.ts";
import { describeError } from "../errors.ts";
import type { Metrics } from "../serve/metrics-registry.ts";

/** One JSON line on stderr: `edge_front_out_of_step` (warn, with the error) or `edge_front_in_step` (info). */
export function edgeEventLine(e: EdgeEvent, at = Date.now()): string {
  const level = e.event === "edge_front_out_of_step" ? "warn" : "info";
  const error =
    e.error === undefined ? {} : { error: (({ name, message }) => ({ name, message }))(describeError(e.error)) };
  return JSON.stringify({ time: new Date(at).toISOString(), level, event: e.event, front: e.front, ...error }) + "\n";
}

/** The pusher for EDGE_FRONTS (null when none is set). */
export function startEdgeFor(config: Pick<Config, "edgeFronts">): EdgePusher | null {
  if (config.edgeFronts.length === 0) return null;
  return createEdgePusher({
    fronts: createFronts(config.edgeFronts),
    keyLimit: DEFAULT_KEY_RATE_LIMIT,
    clock: Date.now,
    onEvent: (e) => process.stderr.write(edgeEventLine(e)),
  });
}

/** The pusher's series in the server's /metrics (a worker's carry its number). */
export function addEdgeMetricsFor(metrics: Metrics | null, pusher: EdgePusher | null): void {
  if (pusher)
    addEdgeMetrics(metrics, () => pusher.status(), cluster.worker ? { worker: String(cluster.worker.id) } : {});
}
