// The usage chart: stacked bars by status class, an SVG rendered here (no script), with its scale and period labels
// in HTML around it so that they keep their size when the bars stretch to the page's width.
import { html } from "hono/html";
import type { Counts } from "../../usage/store.ts";
import { requestsIn } from "../../usage/store.ts";
import type { UsageReport } from "../usage-reads.ts";
import type { Html } from "./layout.ts";

/** The status classes as the pages name them, in the order the bars stack them (bottom first), with their colours. */
export const CLASSES = [
  { key: "ok", name: "2xx", words: "answered (2xx)", colour: "#0072b2" },
  { key: "not_modified", name: "304", words: "not modified (304)", colour: "#56b4e9" },
  { key: "client_error", name: "4xx", words: "refused (4xx but 429)", colour: "#e69f00" },
  { key: "limited", name: "429", words: "over the rate limit (429)", colour: "#d55e00" },
  { key: "server_error", name: "5xx", words: "server errors (5xx)", colour: "#cc79a7" },
] as const satisfies readonly { key: keyof Counts; name: string; words: string; colour: string }[];

/** Width of a period's slot and of its bar in the SVG's own units; the height of the tallest bar. */
const SLOT = 10;
const BAR = 8;
const HEIGHT = 100;

/** The smallest of 1, 2, 5 times a power of ten that is at least `n`: the top of the scale. */
function scaleTop(n: number): number {
  if (n <= 1) return 1;
  const power = 10 ** Math.floor(Math.log10(n));
  return [1, 2, 5, 10].map((m) => m * power).find((v) => v >= n)!;
}

/** A period's start as its label: the day, and the hour for hourly figures (UTC). */
const periodLabel = (at: number, step: number) => {
  const iso = new Date(at).toISOString();
  return step < 86_400_000 ? `${iso.slice(0, 10)} ${iso.slice(11, 16)}` : iso.slice(0, 10);
};

/** "3 requests: 2xx 2, 429 1" for a bar's tooltip. */
function barText(counts: Counts): string {
  const n = requestsIn(counts);
  const parts = CLASSES.filter((c) => counts[c.key] > 0).map((c) => `${c.name} ${counts[c.key]}`);
  return `${n} request${n === 1 ? "" : "s"}${parts.length ? `: ${parts.join(", ")}` : ""}`;
}

/** The chart of `report`; `id` makes its element IDs unique on the page, `subject` says whose figures they are. */
export function usageChart(report: UsageReport, subject: string, id = "chart"): Html {
  const { points, step } = report;
  const top = scaleTop(Math.max(0, ...points.map((p) => requestsIn(p.counts))));
  const unit = step < 86_400_000 ? "hour" : "day";
  const width = points.length * SLOT;
  const bars = points.map((p, i) => {
    let y = HEIGHT;
    const rects = CLASSES.map((c) => {
      const n = p.counts[c.key];
      if (n === 0) return "";
      const h = (n / top) * HEIGHT;
      y -= h;
      return html`<rect
        x="${i * SLOT + (SLOT - BAR) / 2}"
        y="${y.toFixed(3)}"
        width="${BAR}"
        height="${h.toFixed(3)}"
        fill="${c.colour}"
      />`;
    });
    return html`<g><title>${periodLabel(p.at, step)} UTC: ${barText(p.counts)}</title>${rects}</g>`;
  });
  const middle = points[Math.floor(points.length / 2)];
  return html`<figure class="chart">
    <div class="chart-scale" aria-hidden="true"><span>${top.toLocaleString("en")}</span><span>0</span></div>
    <svg
      role="img"
      aria-labelledby="${id}-title ${id}-desc"
      viewBox="0 0 ${width} ${HEIGHT}"
      preserveAspectRatio="none"
      width="100%"
      height="160"
      focusable="false"
    >
      <title id="${id}-title">
        Requests per ${unit} of ${subject}, ${periodLabel(points[0]!.at, step)} to
        ${periodLabel(points.at(-1)!.at, step)} UTC
      </title>
      <desc id="${id}-desc">
        Stacked bars by status: ${CLASSES.map((c) => c.words).join(", ")}. The scale goes up to
        ${top.toLocaleString("en")} requests. The same figures are in the tables below the chart.
      </desc>
      <line
        x1="0"
        y1="${HEIGHT / 2}"
        x2="${width}"
        y2="${HEIGHT / 2}"
        stroke="#d1d5db"
        vector-effect="non-scaling-stroke"
      />
      <line x1="0" y1="${HEIGHT}" x2="${width}" y2="${HEIGHT}" stroke="#6b7280" vector-effect="non-scaling-stroke" />
      ${bars}
    </svg>
    <div class="chart-periods" aria-hidden="true">
      <span>${periodLabel(points[0]!.at, step)}</span
      >${middle ? html`<span>${periodLabel(middle.at, step)}</span>` : ""}<span
        >${periodLabel(points.at(-1)!.at, step)}</span
      >
    </div>
    <figcaption>
      <ul class="legend">
        ${CLASSES.map(
          (c) =>
            html`<li>
              <svg width="12" height="12" aria-hidden="true" focusable="false">
                <rect width="12" height="12" fill="${c.colour}" />
              </svg>
              ${c.words}
            </li>`,
        )}
      </ul>
    </figcaption>
  </figure>`;
}
