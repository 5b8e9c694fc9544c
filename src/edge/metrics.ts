// The pushes to the fronts in the server's /metrics: whether each front is in step, and its pushes and resyncs by
// result, appended to the handler's exposition (as src/cli/start-key-sync.ts appends the key sync's).
import type { Metrics } from "../serve/metrics-registry.ts";
import type { FrontStatus } from "./pusher.ts";

/** Appends the fronts' series to `metrics`' exposition (nothing without metrics), with `labels` on every series. */
export function addEdgeMetrics(
  metrics: Metrics | null,
  status: () => FrontStatus[],
  labels: Record<string, string> = {},
): void {
  if (!metrics) return;
  const render = metrics.render.bind(metrics);
  metrics.render = async () => {
    const exposition = await render();
    return { ...exposition, body: exposition.body + renderEdgeMetrics(status(), labels) };
  };
}

/** The fronts' status as Prometheus text. */
export function renderEdgeMetrics(fronts: readonly FrontStatus[], labels: Record<string, string> = {}): string {
  const l = (more: Record<string, string>) =>
    Object.entries({ ...more, ...labels })
      .map(([k, v]) => `${k}="${v}"`)
      .join(",");
  const head = (name: string, type: string, help: string) =>
    `# HELP flash_sale_${name} ${help}\n# TYPE flash_sale_${name} ${type}\n`;
  let text = head(
    "edge_front_in_step",
    "gauge",
    "1 while every push since the front's last resync reached it (its checks held EDGE_KEY_HOLD); 0 while they are held EDGE_KEY_TTL.",
  );
  for (const f of fronts) text += `flash_sale_edge_front_in_step{${l({ front: f.name })}} ${f.inStep ? 1 : 0}\n`;
  text += head("edge_pushes_total", "counter", "Key changes pushed to a front, by result (ok, failed).");
  for (const f of fronts)
    for (const result of ["ok", "failed"] as const)
      text += `flash_sale_edge_pushes_total{${l({ front: f.name, result })}} ${f.pushes[result]}\n`;
  text += head(
    "edge_resyncs_total",
    "counter",
    "Resyncs of a front (every held check removed), by result (ok, failed).",
  );
  for (const f of fronts)
    for (const result of ["ok", "failed"] as const)
      text += `flash_sale_edge_resyncs_total{${l({ front: f.name, result })}} ${f.resyncs[result]}\n`;
  return text;
}
