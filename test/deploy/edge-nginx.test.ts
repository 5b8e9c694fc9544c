// deploy/nginx/flash-sale-api.conf with keys checked at the edge (issue 26), through a real nginx in front of a
// server: the edge contract (test/helpers/edge-contract.ts), and the access log's key names.
import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeEdgeContract, send } from "../helpers/edge-contract.ts";
import { startTestApi } from "../helpers/fixture.ts";
import type { TestApi } from "../helpers/fixture.ts";
import { startNginx } from "../helpers/fronts.ts";

// nginx owns Cache-Control on what the API marks public: `public, no-cache` (it sends no Age); the rest as the API's.
describeEdgeContract("nginx", (port) => startNginx(port), {
  cacheControl: (origin, front) => (origin?.startsWith("public") ? front === "public, no-cache" : front === origin),
});

describe("nginx's access log with keys checked at the edge", () => {
  let api: TestApi;
  let nginx: Awaited<ReturnType<typeof startNginx>>;
  beforeAll(async () => {
    api = await startTestApi(undefined, { clock: Date.now, trustProxy: ["127.0.0.1"] });
    nginx = await startNginx(Number(new URL(api.url).port));
  }, 60_000);
  afterAll(async () => {
    await nginx?.stop();
    await api?.close();
  });

  it("starts without a warning (its variables fit nginx's table: variables_hash_max_size)", async () => {
    // What it says while reading its configuration goes to stderr; what it says once started, to its global log.
    const said = nginx.stderr() + (await readFile(nginx.logs.global, "utf8"));
    expect(said).toMatch(/\[notice\]/); // nginx's own start lines are there: the log is the one it writes
    expect(said.split("\n").filter((l) => /\[(warn|error|crit|alert|emerg)\]/.test(l))).toEqual([]);
  });

  it("names the key of every request it checked, hits and 429s included, never the key; key=- without one", async () => {
    const target = `/v1/products/categories.json?apikey=${api.key}&affid=log`;
    for (let i = 0; i < 3; i++) expect((await send(nginx.url, target)).status).toBe(200);
    expect((await send(nginx.url, "/v1/products/categories.json?affid=nokey")).status).toBe(401);
    const lines = async () => (await readFile(nginx.logs.access, "utf8")).split("\n").filter(Boolean);
    // nginx writes a request's line once its answer is sent: wait for the last one.
    for (let deadline = Date.now() + 5_000; (await lines()).length < 4 && Date.now() < deadline;)
      await new Promise((r) => setTimeout(r, 10));
    const logged = (await lines()).filter((l) => l.includes("/v1/products/categories.json"));
    expect(logged.map((l) => / cache=(\S+) upstream=\S+ key=(\S+)$/.exec(l)?.slice(1))).toEqual([
      ["MISS", "test"],
      ["HIT", "test"],
      ["HIT", "test"],
      ["HIT", "-"], // the refusal: from the check's copy, no key
    ]);
    expect((await readFile(nginx.logs.access, "utf8")).includes(api.key)).toBe(false);
  });
});
