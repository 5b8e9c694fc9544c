// Helpers of the tests of sale lists with affid (gzip and brotli templates): raw responses, and the expected body.
import { request } from "node:http";
import { sale, standardCatalog, startTestApi } from "./fixture.ts";
import type { TestApi } from "./fixture.ts";

/** A test API over manySalesCatalog(sales), with `variantCacheBytes` for variants and templates. */
export function startListsApi(sales: number, variantCacheBytes: number): Promise<TestApi> {
  return startTestApi(manySalesCatalog(sales), { variantCacheBytes });
}

/** The standard catalog with `n` more sales in the women's store: a sale list with many page links. */
function manySalesCatalog(n: number) {
  const catalog = standardCatalog();
  for (let i = 0; i < n; i++)
    catalog.sales.push(
      sale(`many-${i}`, {
        name: `Winter sale number ${i}`,
        description: `Coats, boots and knitwear for the cold months, sale ${i}: up to ${i % 7}0% off while stocks last.`,
      }),
    );
  return catalog;
}

/** The raw bytes of a GET of `url` with `acceptEncoding`, and their Content-Encoding. */
export function getRaw(url: string, acceptEncoding: string): Promise<{ raw: Buffer; encoding: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { "Accept-Encoding": acceptEncoding } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ raw: Buffer.concat(chunks), encoding: res.headers["content-encoding"] }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** The plain list with `&affid=` after every sale_url, wrapped for JSONP when `callback` is given. */
export function withAffid(plain: string, affid: string, callback = ""): string {
  const json = plain.replace(/("sale_url":"[^"]*)"/g, `$1&affid=${affid}"`);
  return callback ? `/**/${callback}(${json});` : json;
}

/**
 * Runs `work` on an event loop kept busy as a server's is under load (every turn spends `turnMs` of CPU, as a batch
 * of requests would); returns what it made and how many turns of the loop it took.
 */
export async function onBusyLoop<T>(work: () => Promise<T>, turnMs = 2): Promise<{ made: T; turns: number }> {
  let turns = 0;
  let done = false;
  const turn = () => {
    if (done) return;
    turns++;
    const until = performance.now() + turnMs;
    while (performance.now() < until); // the requests' CPU
    setImmediate(turn);
  };
  setImmediate(turn);
  try {
    const made = await work();
    return { made, turns };
  } finally {
    done = true;
  }
}

/** A list of `n` sales in the shape of a sale list (ASCII), and where its page links end (where `&affid=` goes). */
export function listBody(n: number): { body: Buffer; links: number[] } {
  const sales = Array.from({ length: n }, (_, i) => ({
    name: `Sale ${i}`,
    description: `Coats, boots and knitwear for the cold months, sale ${i}: up to ${i % 7}0% off while stocks last.`,
    sale_url: `https://shop.test/sales/${i}?utm_source=api&utm_medium=feed`,
  }));
  const body = Buffer.from(JSON.stringify({ sales }));
  const links: number[] = [];
  for (const m of body.toString("latin1").matchAll(/"sale_url":"[^"]*"/g)) links.push(m.index + m[0].length - 1);
  return { body, links };
}
