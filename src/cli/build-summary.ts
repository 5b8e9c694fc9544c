// The build CLI's one-line summary and its --every interval, shared with `npm start`.
import { UsageError } from "./args.ts";
import type { BuildResult } from "../generate/index.ts";

/** "90s", "5m", "1h" -> ms */
export function parseInterval(text: string): number {
  const m = /^([1-9][0-9]*)(s|m|h)$/.exec(text);
  if (!m) throw new UsageError(`--every: "${text}" is not an interval like 30s, 5m or 1h`);
  return Number(m[1]) * { s: 1000, m: 60_000, h: 3_600_000 }[m[2] as "s" | "m" | "h"];
}

export function summarize(r: BuildResult): string {
  const mb = (r.bytesWritten / 1e6).toFixed(1);
  const what = r.changed
    ? `published ${r.id}: ${r.blobsWritten - r.blobsCopied} of ${r.blobs} blobs new${r.repacked ? `, repacked (${r.blobsCopied} copied from the old packs)` : ""}, ${r.productsReused} product bodies reused${r.searchIndexReused ? ", search index reused" : ""}`
    : `catalog unchanged: kept ${r.id}, wrote nothing`;
  const peak = Math.round(process.resourceUsage().maxRSS / 1024);
  return (
    `build: ${r.resources} resources (${r.sales} sales, ${r.products} products), ${r.filesWritten} files, ${mb} MB written in ${(r.durationMs / 1000).toFixed(1)} s, peak RSS ${peak} MB; ${what}` +
    (r.warnings.warningCount ? `; ${r.warnings.warningCount} warnings` : "")
  );
}
