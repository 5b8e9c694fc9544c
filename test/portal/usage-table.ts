// Reads a usage page's figures tables (src/portal/views/usage-pages.ts) back from its HTML, for the HTTP tests.

/** A row header as shown, its tags and spacing removed; a period's as its instant ("2026-11-22 17:00", "2026-11-22"). */
function rowName(header: string): string {
  const time = /^\s*<time datetime="([^"]+)"/.exec(header)?.[1];
  if (time) return time.replace("T", " ").replace(/Z$/, "");
  const entities: Record<string, string> = { "&amp;": "&", "&quot;": '"', "&#39;": "'", "&lt;": "<", "&gt;": ">" };
  return header
    .replace(/<[^>]*>/g, "")
    .replace(/&(?:amp|quot|#39|lt|gt);/g, (e) => entities[e]!)
    .replace(/\s+/g, " ")
    .trim();
}

/** Every figures table: its caption to its rows (header to cells: all, 2xx, 304, 4xx, 429, 5xx as numbers). */
function usageTables(html: string): Map<string, Map<string, number[]>> {
  const tables = new Map<string, Map<string, number[]>>();
  for (const t of html.matchAll(/<table class="figures[^"]*">\s*<caption>([\s\S]*?)<\/caption>([\s\S]*?)<\/table>/g)) {
    const rows = new Map<string, number[]>();
    for (const m of t[2]!.matchAll(/<tr>\s*<th scope="row">([\s\S]*?)<\/th>((?:\s*<td>[^<]*<\/td>)+)\s*<\/tr>/g)) {
      const cells = [...m[2]!.matchAll(/<td>([^<]*)<\/td>/g)].map((c) => Number(c[1]!.replaceAll(",", "")));
      rows.set(rowName(m[1]!), cells);
    }
    tables.set(t[1]!.replace(/\s+/g, " ").trim(), rows);
  }
  return tables;
}

/** The rows of the tables whose caption starts with `caption`, together. */
export function tableRows(html: string, caption: string): Map<string, number[]> {
  const rows = new Map<string, number[]>();
  for (const [c, t] of usageTables(html)) if (c.startsWith(caption)) for (const [k, v] of t) rows.set(k, v);
  return rows;
}

/** Every period's row of the per-hour or per-day tables (a day or a month each), and "Total": the span's. */
export function usageTable(html: string): Map<string, number[]> {
  const rows = new Map<string, number[]>();
  for (const [k, v] of tableRows(html, "Requests per ")) if (!k.endsWith(" total")) rows.set(k, v);
  const total = tableRows(html, "Requests by endpoint").get("All endpoints");
  rows.set("Total", total ?? [0, 0, 0, 0, 0, 0]);
  return rows;
}
