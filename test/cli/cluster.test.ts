// WORKERS=2 (src/cli/cluster.ts): two server processes on one port; a snapshot published under load reaches both
// with no failed or mixed response; a killed worker is logged and replaced; SIGTERM drains them all.
import { spawnSync } from "node:child_process";
import { once } from "node:events";
import { get } from "node:http";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { requireProgram } from "../../scripts/lib/test-programs.ts";
import { buildSnapshot } from "../../src/generate/index.ts";
import { createKey } from "../../src/keys/keys-file.ts";
import { currentSnapshotId } from "../../src/snapshot/load.ts";
import { DEFAULT_RELOAD_INTERVAL } from "../../src/serve/http/reloader.ts";
import { BASE, iso, spawnServe, standardCatalog, tempDir, writeCatalog } from "../helpers/fixture.ts";

/** Version k of a catalog on sale now (real clock): every sale's name ends in `v<k>`. */
function catalogVersion(k: number) {
  const c = standardCatalog();
  const now = Math.floor(Date.now() / 1000);
  c.sales = c.sales.map((s) => ({
    ...s,
    name: `Sale ${s.key} v${k}`,
    begins: iso(now - 3600),
    ends: iso(now + 86_400),
  }));
  return c;
}

interface Health {
  snapshot: string;
  worker?: number;
}

describe("WORKERS=2", () => {
  it("serves from two workers, swaps both to a new snapshot under load, replaces a killed one, drains on SIGTERM", async () => {
    const pgrep = requireProgram("pgrep"); // installed by npm test's first step
    const root = await tempDir();
    const dataDir = join(root, "data");
    const catalogDir = join(root, "catalog");
    const keysFile = join(root, "keys.json");
    const publish = async (k: number) => {
      await writeCatalog(catalogDir, catalogVersion(k));
      await buildSnapshot({ catalogDir, dataDir, baseUrl: BASE });
      return (await currentSnapshotId(dataDir))!;
    };
    const first = await publish(1);
    const key = await createKey(keysFile, "cluster", new Date(), { rate: 1e9, burst: 1e9 });
    const child = spawnServe({ DATA_DIR: dataDir, KEYS_FILE: keysFile, WORKERS: "2", LOG_REQUESTS: "0" }, [
      "ignore",
      "ignore",
      "pipe",
    ]);
    let stderr = "";
    let stop = false; // ends the clients below, also when an assertion fails first
    child.stderr!.on("data", (c: Buffer) => (stderr += c.toString()));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        child.stderr!.on("data", () => {
          const m = /listening on (http:\/\/127\.0\.0\.1:\d+) \(2 workers\)/.exec(stderr);
          if (m) resolve(m[1]!);
        });
        child.once("exit", (code) => reject(new Error(`serve exited (${code}): ${stderr}`)));
      });
      // A new connection each time: the primary hands connections, not requests, to the workers in turn. One that
      // went to a worker as it was killed may get no answer: it counts as none (null) after a second.
      const health = () =>
        new Promise<Health | null>((resolve) => {
          const req = get(`${url}/healthz`, { agent: false }, (res) => {
            let body = "";
            res.on("data", (c: Buffer) => (body += c.toString()));
            res.on("end", () => resolve(JSON.parse(body) as Health));
            res.on("error", () => resolve(null));
          });
          req.setTimeout(1_000, () => req.destroy());
          req.on("error", () => resolve(null));
        });
      /**
       * Asks /healthz until `done` holds for what it has seen (each answer names its worker), for at most 20 s: a
       * bound in time, not in requests, since a loaded CI machine answers fewer of them in the same time.
       */
      const until = async (done: (seen: Health[]) => boolean, what: string) => {
        const seen: Health[] = [];
        const deadline = Date.now() + 20_000;
        while (Date.now() < deadline && !done(seen)) {
          const h = await health();
          if (h) seen.push(h);
        }
        expect(done(seen), `${what}; seen ${JSON.stringify(seen.slice(-4))}; ${stderr}`).toBe(true);
        return seen;
      };

      const initial = await until((s) => new Set(s.map((h) => h.worker)).size === 2, "both workers answer");
      expect(initial.every((h) => h.snapshot === first)).toBe(true);

      // Continuous requests while the second snapshot is published: every answer whole, from one snapshot.
      const failures: string[] = [];
      const client = async () => {
        while (!stop) {
          const res = await fetch(`${url}/v1/sales/active.json?apikey=${key}`).catch((err: unknown) => {
            failures.push(`fetch: ${String(err)}`);
            return null;
          });
          if (!res) continue;
          if (res.status !== 200) failures.push(`status ${res.status}`);
          const names = ((await res.json()) as { sales: { name: string }[] }).sales.map((s) => s.name.split(" ").pop());
          if (new Set(names).size !== 1) failures.push(`mixed ${[...new Set(names)].join(",")}`);
        }
      };
      const clients = [client(), client(), client()];
      const second = await publish(2);
      const published = Date.now();
      // Both workers on the new snapshot: the last 8 answers, from both workers, all name it.
      await until((s) => {
        const last = s.slice(-8);
        return (
          last.length === 8 && new Set(last.map((h) => h.worker)).size === 2 && last.every((h) => h.snapshot === second)
        );
      }, "both workers on the new snapshot");
      const switchedMs = Date.now() - published;
      stop = true;
      await Promise.all(clients);
      expect(failures).toEqual([]);
      // Each worker looks every DEFAULT_RELOAD_INTERVAL; loading the small snapshot takes well under 2 s more.
      expect(switchedMs).toBeLessThan(DEFAULT_RELOAD_INTERVAL + 2_000);

      // A worker killed: logged, replaced by a new one (a new worker ID), and the server keeps answering.
      // The primary's children running serve.ts: the workers (tsx's esbuild service is a child too).
      const workers = spawnSync(pgrep, ["-P", String(child.pid), "-f", "serve.ts"], { encoding: "utf8" })
        .stdout.trim()
        .split("\n");
      expect(workers).toHaveLength(2);
      process.kill(Number(workers[0]), "SIGKILL");
      await until((s) => s.some((h) => (h.worker ?? 0) > 2), "a replacement worker answers");
      expect(stderr).toMatch(/"event":"worker_exited".*exited: SIGKILL/);

      child.kill("SIGTERM");
      const [code] = (await once(child, "exit")) as [number | null];
      expect(code).toBe(0);
      expect(
        spawnSync(pgrep, ["-P", String(child.pid), "-f", "serve.ts"])
          .stdout.toString()
          .trim(),
      ).toBe("");
    } finally {
      stop = true;
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  }, 120_000);
});
