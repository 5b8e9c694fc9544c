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
