// Reads a usage page's figures table (src/portal/views/usage-pages.ts) back from its HTML, for the HTTP tests.

/** The table's rows: the period as shown (or "Total") to its cells (all, 2xx, 304, 4xx, 429, 5xx) as numbers. */
export function usageTable(html: string): Map<string, number[]> {
  const rows = new Map<string, number[]>();
  for (const m of html.matchAll(/<tr>\s*<th scope="row">([\s\S]*?)<\/th>((?:\s*<td>[^<]*<\/td>)+)\s*<\/tr>/g)) {
    const cells = [...m[2]!.matchAll(/<td>([^<]*)<\/td>/g)].map((c) => Number(c[1]!.replaceAll(",", "")));
    rows.set(
      m[1]!
        .replace(/<[^>]*>/g, "")
        .replace(/\s+/g, " ")
        .trim(),
      cells,
    );
  }
  return rows;
}
