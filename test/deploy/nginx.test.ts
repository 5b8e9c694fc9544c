// deploy/nginx/flash-sale-api.conf in front of a real server, through a real nginx (Debian's `nginx-light`, installed
// by npm test's first step): 200s are cached and revalidated, errors are not, keys are never shared, and what leaves
// nginx tells a cache behind it to revalidate (nginx would otherwise pass on the API's max-age as if the copy were
// new).
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireProgram } from "../../scripts/lib/test-programs.ts";
import { freePort, standardCatalog, startTestApi, T0, tempDir } from "../helpers/fixture.ts";
import type { TestApi } from "../helpers/fixture.ts";

// Installed by npm test's first step; if it is missing, the file fails naming it.
const NGINX = requireProgram("nginx");
const CONF = fileURLToPath(new URL("../../deploy/nginx/flash-sale-api.conf", import.meta.url));

let api: TestApi;
let nginx: ChildProcess;
let cacheUrl: string;

beforeAll(async () => {
  api = await startTestApi(standardCatalog());
  api.clock.now = T0;
  const dir = await tempDir("fsa-nginx-");
  const port = await freePort();
  const site = (await readFile(CONF, "utf8"))
    .replace("server 127.0.0.1:8080;", `server 127.0.0.1:${new URL(api.url).port};`)
    .replace("listen 80;", `listen 127.0.0.1:${port};`)
    .replace("/var/cache/nginx/flash-sale-api", join(dir, "cache"));
  expect(site).toContain(`listen 127.0.0.1:${port};`);
  await mkdir(join(dir, "logs"));
  await writeFile(join(dir, "site.conf"), site);
  await writeFile(
    join(dir, "nginx.conf"),
    `daemon off;\nmaster_process off;\nuser root;\npid ${join(dir, "nginx.pid")};\nerror_log ${join(dir, "logs", "error.log")} warn;\n` +
      `events { worker_connections 64; }\nhttp {\n  access_log off;\n  client_body_temp_path ${join(dir, "body")};\n` +
      `  proxy_temp_path ${join(dir, "proxy")};\n  include ${join(dir, "site.conf")};\n}\n`,
  );
  nginx = spawn(NGINX, ["-p", dir, "-c", join(dir, "nginx.conf")], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  nginx.stderr!.on("data", (c: Buffer) => (output += c.toString()));
  cacheUrl = `http://127.0.0.1:${port}`;
  // Ready once it answers (it prints nothing when it starts).
  for (let i = 0; ; i++) {
    if (nginx.exitCode !== null) throw new Error(`nginx exited (${nginx.exitCode}): ${output}`);
    const ok = await fetch(`${cacheUrl}/healthz`).then(
      () => true,
      () => false,
    );
    if (ok) break;
    if (i > 200) throw new Error(`nginx did not answer: ${output}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}, 60_000);

afterAll(async () => {
  if (nginx && nginx.exitCode === null) {
    nginx.kill("SIGKILL");
    await once(nginx, "exit");
  }
  await api?.close();
});

async function viaCache(path: string, headers: Record<string, string> = {}) {
  const res = await fetch(cacheUrl + path, { headers });
  return {
    status: res.status,
    cache: res.headers.get("x-cache"),
    cacheControl: res.headers.get("cache-control"),
    etag: res.headers.get("etag"),
    encoding: res.headers.get("content-encoding"),
    body: await res.text(),
  };
}

describe("nginx with deploy/nginx/flash-sale-api.conf", () => {
  it("caches a 200 and tells caches behind it to revalidate; If-None-Match gives a 304", async () => {
    const path = `/v1/sales/active.json?apikey=${api.key}`;
    const first = await viaCache(path);
    const second = await viaCache(path);
    expect([first.status, first.cache, first.cacheControl]).toEqual([200, "MISS", "public, no-cache"]);
    expect([second.status, second.cache, second.cacheControl, second.body]).toEqual([
      200,
      "HIT",
      "public, no-cache",
      first.body,
    ]);
    const revalidated = await fetch(cacheUrl + path, { headers: { "If-None-Match": first.etag! } });
    expect(revalidated.status).toBe(304);
    const br = await viaCache(path, { "Accept-Encoding": "gzip;q=0.5, br" });
    const br2 = await viaCache(path, { "Accept-Encoding": "br" });
    expect([br.encoding, br2.encoding, br2.cache]).toEqual(["br", "br", "HIT"]);
  });

  it("never caches a 401 or shares a copy between keys", async () => {
    await viaCache(`/v1/sales/active.json?apikey=${api.key}`);
    for (const path of ["/v1/sales/active.json", `/v1/sales/active.json?apikey=${"A".repeat(32)}`]) {
      for (let i = 0; i < 2; i++) {
        const r = await viaCache(path);
        expect([path, r.status, r.cache, r.cacheControl]).toEqual([path, 401, "MISS", "no-store"]);
      }
    }
  });

  it("caches the 404 of a product between sales like a 200; not that of an unknown product", async () => {
    const between = `/v1/products/3/detail.json?apikey=${api.key}`;
    const unknown = `/v1/products/999/detail.json?apikey=${api.key}`;
    await viaCache(between);
    await viaCache(unknown);
    const b = await viaCache(between);
    const u = await viaCache(unknown);
    expect([b.status, b.cache, b.cacheControl]).toEqual([404, "HIT", "public, no-cache"]);
    expect([u.status, u.cache, u.cacheControl]).toEqual([404, "MISS", "no-store"]);
  });
});
