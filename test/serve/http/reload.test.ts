// Hot reload: 20 snapshots published under continuous requests; no failure, no response mixing two snapshots, no leak.
import { join } from "node:path";
import v8 from "node:v8";
import vm from "node:vm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildSnapshot } from "../../../src/generate/index.ts";
import { revokeKey } from "../../../src/keys/keys-file.ts";
import { createReloader } from "../../../src/serve/http/reloader.ts";
import type { Reloader } from "../../../src/serve/http/reloader.ts";
import {
  BASE,
  catalogVersion as fixtureCatalogVersion,
  startTestApi,
  T0,
  versionClients,
  withKey,
  writeCatalog,
} from "../../helpers/fixture.ts";
import type { TestApi } from "../../helpers/fixture.ts";

v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;

const catalogVersion = (k: number) => fixtureCatalogVersion(k, 400);

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
    const clients = versionClients(api);
    const swaps: string[] = [];
    for (let k = 1; k <= 20; k++) {
      await publish(k);
      swaps.push(api.handler.snapshot().id);
    }
    await clients.stop();
    expect(clients.failures).toEqual([]);
    expect(new Set(swaps).size).toBe(20);
    expect(clients.seen.size).toBeGreaterThan(1);
    expect(
      ((await (await api.get(withKey(api, "/v1/sales/women/boots/detail.json"))).json()) as { name: string }).name,
    ).toBe("Sale boots v20");
    expect(clients.requests).toBeGreaterThan(40);
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
