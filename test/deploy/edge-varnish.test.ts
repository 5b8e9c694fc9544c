// deploy/varnish/default.vcl with keys checked at the edge (issue 26), through a real varnishd (with Debian's
// varnish-modules) in front of a server: the edge contract (test/helpers/edge-contract.ts), and the key's name in
// Varnish's log for varnishncsa.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireProgram } from "../../scripts/lib/test-programs.ts";
import { describeEdgeContract, send } from "../helpers/edge-contract.ts";
import { startTestApi } from "../helpers/fixture.ts";
import type { TestApi } from "../helpers/fixture.ts";
import { stopProcess, watchOutput } from "../helpers/processes.ts";
import type { Watched } from "../helpers/processes.ts";
import { startVarnish } from "../helpers/varnish.ts";
import type { Varnish } from "../helpers/varnish.ts";

const VCL = fileURLToPath(new URL("../../deploy/varnish/default.vcl", import.meta.url));

// Varnish passes the API's Cache-Control on with an Age: max-age less Age is the origin's max-age (a second apart at
// most, as the two were answered in different seconds).
describeEdgeContract("Varnish", (port) => startVarnish(VCL, port), {
  cacheControl: (origin, front, age) => {
    const maxAge = (v: string | undefined) => Number(/max-age=(\d+)/.exec(v ?? "")?.[1]);
    if (!origin?.startsWith("public")) return front === origin;
    const same = front?.replace(/\d+$/, "") === origin.replace(/\d+$/, "");
    return same && Math.abs(maxAge(front) - age - maxAge(origin)) <= 1;
  },
});

describe("Varnish's log with keys checked at the edge", () => {
  let api: TestApi;
  let varnish: Varnish;
  let ncsa: Watched | undefined;
  beforeAll(async () => {
    api = await startTestApi(undefined, { clock: Date.now, trustProxy: ["127.0.0.1"] });
    varnish = await startVarnish(VCL, Number(new URL(api.url).port));
  }, 60_000);
  afterAll(async () => {
    await stopProcess(ncsa);
    await varnish?.stop();
    await api?.close();
  });

  it("gives varnishncsa the key's name (%{VCL_Log:key}x) on every request it checked, hits included", async () => {
    ncsa = watchOutput(
      spawn(
        requireProgram("varnishncsa"),
        ["-n", varnish.instance, "-F", "%{Varnish:handling}x %s %U key=%{VCL_Log:key}x"],
        { stdio: ["ignore", "pipe", "pipe"] },
      ),
      "stdout",
    );
    // varnishncsa reads the log from when it is attached: a probe until its line shows.
    for (let deadline = Date.now() + 10_000; !ncsa.output().includes("/probe") && Date.now() < deadline;) {
      await send(varnish.url, "/probe");
      await new Promise((r) => setTimeout(r, 50));
    }
    const target = `/v1/products/categories.json?apikey=${api.key}`;
    for (let i = 0; i < 2; i++) expect((await send(varnish.url, target)).status).toBe(200);
    expect((await send(varnish.url, "/v1/products/sizes.json")).status).toBe(401);
    await ncsa.waitFor(/ \/v1\/products\/sizes\.json key=/);
    const lines = ncsa
      .output()
      .split("\n")
      .filter((l) => l.includes("/v1/products/"));
    expect(lines).toEqual([
      "miss 200 /v1/products/categories.json key=test",
      "hit 200 /v1/products/categories.json key=test",
      "miss 401 /v1/products/sizes.json key=", // no key checked: nothing logged
    ]);
    expect(ncsa.output()).not.toContain(api.key);
  });
});
