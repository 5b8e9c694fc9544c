// Before measuring: the server answers a sample of the benchmark's searches with 200s that are the contract's
// search result (§3), agree with the brute-force reference, and decompress to the same bytes when gzipped.
import { request } from "node:http";
import type { IncomingHttpHeaders } from "node:http";
import { gunzipSync } from "node:zlib";
import { SearchResultSchema } from "../../src/api/schemas.ts";
import type { SearchDoc, SearchQuery } from "../../src/search/types.ts";
import { comparePage, createReference } from "../search/reference.ts";

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** One GET with the given headers, the body as sent (not decompressed). */
export function httpGet(url: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

export interface CheckReport {
  checked: number;
  /** total_found of the checked searches: how many matched nothing, the median and the largest. */
  empty: number;
  medianTotal: number;
  maxTotal: number;
  /** Bytes of the identity and gzip bodies, summed over the checked searches. */
  identityBytes: number;
  gzipBytes: number;
}

/**
 * GETs `sample` (indexes into `queries`/`targets`) without and with gzip and checks every answer; throws with
 * every problem found. `now` is the server's clock, epoch seconds.
 */
export async function checkResponses(
  base: string,
  apikey: string,
  docs: readonly SearchDoc[],
  queries: readonly SearchQuery[],
  targets: readonly string[],
  sample: readonly number[],
  now: number,
): Promise<CheckReport> {
  const problems: string[] = [];
  const unauth = await httpGet(`${base}${targets[0]!.replace(/apikey=[^&]*&?/, "")}`);
  if (unauth.status !== 401)
    problems.push(`a search without a key answered ${unauth.status}, not 401: is the key check on?`);

  const reference = createReference(docs);
  const totals: number[] = [];
  let identityBytes = 0;
  let gzipBytes = 0;
  for (const i of sample) {
    const query = queries[i]!;
    const target = targets[i]!;
    const fail = (what: string) => problems.push(`${target.replace(apikey, "<key>")}: ${what}`);
    const plain = await httpGet(base + target, { "accept-encoding": "identity" });
    if (plain.status !== 200) {
      fail(`status ${plain.status}: ${plain.body.toString().slice(0, 200)}`);
      continue;
    }
    if (plain.headers["content-type"] !== "application/json; charset=utf-8")
      fail(`content-type ${plain.headers["content-type"]}`);
    const parsed = SearchResultSchema.safeParse(JSON.parse(plain.body.toString("utf8")));
    if (!parsed.success) {
      fail(`not a search result: ${parsed.error.message.slice(0, 300)}`);
      continue;
    }
    const { products, total_found: total, facets } = parsed.data;
    totals.push(total);
    if (products.length > query.rows) fail(`${products.length} products for rows=${query.rows}`);
    const differs = comparePage(
      products.map((p) => p.id),
      total,
      reference.search({ ...query, now }),
      query.start,
      query.rows,
      facets,
    );
    if (differs) fail(`differs from the brute-force reference: ${differs}`);

    const gz = await httpGet(base + target, { "accept-encoding": "gzip" });
    identityBytes += plain.body.length;
    if (gz.status !== 200) fail(`gzip: status ${gz.status}`);
    else if (gz.headers["content-encoding"] === "gzip") {
      gzipBytes += gz.body.length;
      if (!gunzipSync(gz.body).equals(plain.body)) fail("the gzip body does not decompress to the identity body");
    } else {
      gzipBytes += gz.body.length;
      if (!gz.body.equals(plain.body)) fail("the body sent for Accept-Encoding: gzip differs from the identity body");
    }
  }
  if (problems.length > 0)
    throw new Error(`${problems.length} problem(s) in the checked responses:\n  ${problems.slice(0, 20).join("\n  ")}`);
  totals.sort((a, b) => a - b);
  return {
    checked: sample.length,
    empty: totals.filter((t) => t === 0).length,
    medianTotal: totals[totals.length >> 1] ?? 0,
    maxTotal: totals[totals.length - 1] ?? 0,
    identityBytes,
    gzipBytes,
  };
}
