// Key changes pushed to the shipped nginx by `npm run serve` with WORKERS=2 (issue 37): each worker pushes what its
// reload finds and purges the checks it answered itself, so a check held an hour by either worker is reached.
import { once } from "node:events";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKey, revokeKey } from "../../src/keys/keys-file.ts";
import { send } from "../helpers/edge-contract.ts";
import { buildStandardSnapshot, freePort, spawnServe, tempDir } from "../helpers/fixture.ts";
import { startNginx } from "../helpers/fronts.ts";

const PATH = "/v1/products/categories.json";
const TOKEN = "edge-push-workers-token";

describe("WORKERS=2 pushing to nginx", () => {
  let child: ReturnType<typeof spawnServe>;
  let nginx: Awaited<ReturnType<typeof startNginx>>;
  let keysFile: string;
  let stdout = "";
  let url: string;
  let stderr = "";
  const checks = () => stdout.split('"path":"/edge/key"').length - 1;

  beforeAll(async () => {
    const root = await tempDir();
    const dataDir = join(root, "data");
    keysFile = join(root, "keys.json");
    await buildStandardSnapshot(root, dataDir);
    const at = { dir: await tempDir("fsa-push-nginx-"), port: await freePort() };
    child = spawnServe(
      {
        DATA_DIR: dataDir,
        KEYS_FILE: keysFile,
        WORKERS: "2",
        USAGE: "0",
        TRUST_PROXY: "loopback",
        EDGE_FRONTS: `nginx=http://127.0.0.1:${at.port}`,
        EDGE_KEY_TTL: "0",
        METRICS_TOKEN: TOKEN,
      },
      ["ignore", "pipe", "pipe"],
    );
    child.stdout!.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr!.on("data", (c: Buffer) => (stderr += c.toString()));
    url = await new Promise<string>((resolve, reject) => {
      child.stderr!.on("data", () => {
        const m = /listening on (http:\/\/127\.0\.0\.1:\d+) \(2 workers\)/.exec(stderr);
        if (m) resolve(m[1]!);
      });
      child.once("exit", (code) => reject(new Error(`serve exited (${code}): ${stderr}`)));
    });
    nginx = await startNginx(Number(new URL(url).port), undefined, at);
    // Each worker resyncs nginx once it answers: both in step.
    for (const deadline = Date.now() + 20_000; stderr.split('"event":"edge_front_in_step"').length < 3;) {
      if (Date.now() > deadline) throw new Error(`the workers are not in step: ${stderr}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }, 60_000);

  afterAll(async () => {
    await nginx?.stop();
    if (child && child.exitCode === null) {
      child.kill("SIGTERM");
      await once(child, "exit");
    }
  });

  it("holds a check for the hour whichever worker answered it, and refuses the key within 2 s of its revocation", async () => {
    const keys = await Promise.all(
      [1, 2, 3, 4].map((i) => createKey(keysFile, `worker-key-${i}`, new Date(), { rate: 1e9, burst: 1e9 })),
    );
    // Each worker pushes the new keys (a reload or more each), and again a second later (which purges a check held
    // meanwhile): done once both have pushed and neither has for 1.5 s.
    const pushes = new Map<string, number>();
    let seen = "";
    for (let since = Date.now(), deadline = since + 15_000; ;) {
      const text = (await send(url, "/metrics", { headers: { Authorization: `Bearer ${TOKEN}` } })).body.toString();
      for (const m of text.matchAll(/flash_sale_edge_pushes_total\{front="nginx",result="ok",worker="(\d+)"\} (\d+)/g))
        pushes.set(m[1]!, Number(m[2]));
      const now = JSON.stringify([...pushes].sort());
      if (now !== seen) [seen, since] = [now, Date.now()];
      if (pushes.size === 2 && [...pushes.values()].every((n) => n >= 2) && Date.now() - since > 1_500) break;
      if (Date.now() > deadline) throw new Error(`pushes: ${now}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    // Each check held by the worker that answered it.
    for (const key of keys)
      for (const deadline = Date.now() + 5_000; (await send(nginx.url, `${PATH}?apikey=${key}`)).status !== 200;)
        if (Date.now() > deadline) throw new Error("the new key is not served");
    const logged = async () => {
      // The workers write their request logs in batches: wait until the count holds still.
      for (let last = -1; last !== checks();) {
        last = checks();
        await new Promise((r) => setTimeout(r, 1_200));
      }
      return checks();
    };
    const before = await logged();
    for (let i = 0; i < 10; i++)
      for (const key of keys) expect((await send(nginx.url, `${PATH}?apikey=${key}`)).status).toBe(200);
    expect((await logged()) - before).toBe(0);
    const revoked = Date.now();
    for (let i = 0; i < 4; i++) await revokeKey(keysFile, `worker-key-${i + 1}`);
    for (const key of keys)
      while ((await send(nginx.url, `${PATH}?apikey=${key}`)).status !== 401) {
        expect(Date.now() - revoked).toBeLessThan(2_000);
        await new Promise((r) => setTimeout(r, 10));
      }
    console.log(`WORKERS=2: four revoked keys refused at nginx ${Date.now() - revoked} ms after the revocations`);
    expect(Date.now() - revoked).toBeLessThan(2_000);
  });
});
