// Hot reload: 20 snapshots published under continuous requests; no failure, no response mixing two snapshots, no leak.
import { join } from "node:path";
import v8 from "node:v8";
import vm from "node:vm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildSnapshot } from "../../src/build/index.ts";
import { revokeKey } from "../../src/keys/keys-file.ts";
import { createReloader } from "../../src/serve/reloader.ts";
import type { Reloader } from "../../src/serve/reloader.ts";
import { BASE, product, standardCatalog, startTestApi, T0, withKey, writeCatalog } from "../helpers/fixture.ts";
import type { TestApi } from "../helpers/fixture.ts";

v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;

/** Version k of the catalog: every sale and product name carries `v<k>`, and 400 big products make the snapshot weigh a few MB. */
function catalogVersion(k: number) {
  const c = standardCatalog();
  const extra = Array.from({ length: 400 }, (_, i) =>
    product(1000 + i, { name: `Filler ${i} v${k}`, content: { description: `Version ${k}. `.repeat(200) } }),
  );
  c.products = c.products.map((p) => ({ ...p, name: `${p.name} v${k}` })).concat(extra);
  c.sales = c.sales.map((s) => ({
    ...s,
    name: `Sale ${s.key} v${k}`,
    product_ids: s.key === "boots" ? [...s.product_ids, ...extra.map((p) => p.id)] : s.product_ids,
  }));
  return c;
}

let api: TestApi;
let reloader: Reloader;
beforeAll(async () => {
  api = await startTestApi(catalogVersion(0));
  reloader = createReloader(api.handler, api.dataDir, api.keysFile, { interval: 3_600_000 });
});
afterAll(async () => {
  reloader.stop();
  await api.close();
});

async function publish(k: number): Promise<void> {
  const catalogDir = join(api.dataDir, "..", "catalog");
  await writeCatalog(catalogDir, catalogVersion(k));
  await buildSnapshot({ catalogDir, dataDir: api.dataDir, baseUrl: BASE, keep: 2 });
  await reloader.check();
}

describe("hot reload", () => {
  it("swaps 20 snapshots under continuous requests with no failure and no mixed response", async () => {
    api.clock.now = T0;
    gc();
    const heapBefore = process.memoryUsage().heapUsed;
    let done = false;
    const versionsSeen = new Set<string>();
    const failures: string[] = [];
    let requests = 0;
    const client = async () => {
      while (!done) {
        const [list, detail] = await Promise.all([
          api.get(withKey(api, "/v1/sales/active.json")),
          api.get(withKey(api, "/v1/products/1000/detail.json")),
        ]);
        requests += 2;
        if (list.status !== 200 || detail.status !== 200) failures.push(`status ${list.status}/${detail.status}`);
        const names = ((await list.json()) as { sales: { name: string; products?: string[] }[] }).sales.map(
          (s) => s.name,
        );
        const versions = new Set(names.map((n) => n.split(" ").pop()));
        if (versions.size !== 1) failures.push(`one list mixes ${[...versions].join(", ")}`);
        versionsSeen.add([...versions][0]!);
        const name = ((await detail.json()) as { name: string }).name;
        if (!/^Filler 0 v\d+$/.test(name)) failures.push(`detail ${name}`);
      }
    };
    const clients = [client(), client(), client()];
    const swaps: string[] = [];
    for (let k = 1; k <= 20; k++) {
      await publish(k);
      swaps.push(api.handler.snapshot().id);
    }
    done = true;
    await Promise.all(clients);
    expect(failures).toEqual([]);
    expect(new Set(swaps).size).toBe(20);
    expect(versionsSeen.size).toBeGreaterThan(1);
    expect(
      ((await (await api.get(withKey(api, "/v1/sales/women/boots/detail.json"))).json()) as { name: string }).name,
    ).toBe("Sale boots v20");
    expect(requests).toBeGreaterThan(40);
    gc();
    // Each snapshot here holds ~3 MB; a leak of old snapshots would add ~60 MB.
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(15 * 1024 * 1024);
  });

  it("refuses a revoked key after the reload that follows", async () => {
    expect((await api.get(withKey(api, "/v1/sales/active.json"))).status).toBe(200);
    await revokeKey(api.keysFile, "test");
    await reloader.check();
    const res = await api.get(withKey(api, "/v1/sales/active.json"));
    expect(res.status).toBe(401);
    expect(((await res.json()) as { code: string }).code).toBe("api_key_invalid");
  });
});
