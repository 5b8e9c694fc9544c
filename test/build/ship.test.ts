// Shipping snapshots to a replica (src/build/ship.ts): a server watching the replica while snapshots are copied in
// sees no failure and no response mixing two snapshots; a ship that fails leaves the replica as it was; the remote
// form (rsync over a shell) publishes the same way.
import { spawnSync } from "node:child_process";
import { chmod, readdir, readFile, readlink, truncate, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireProgram } from "../../scripts/lib/test-programs.ts";
import { buildSnapshot } from "../../src/build/index.ts";
import { shipSnapshot } from "../../src/build/ship.ts";
import { packPath, ROUTES_FILE, snapshotDir } from "../../src/snapshot/format.ts";
import { currentSnapshotId, loadSnapshot, verifySnapshot } from "../../src/snapshot/load.ts";
import { createReloader } from "../../src/serve/reloader.ts";
import type { Reloader } from "../../src/serve/reloader.ts";
import {
  BASE,
  catalogVersion as fixtureCatalogVersion,
  startTestApi,
  T0,
  tempDir,
  versionClients,
  withKey,
  writeCatalog,
} from "../helpers/fixture.ts";
import type { TestApi } from "../helpers/fixture.ts";

const REPO = fileURLToPath(new URL("../..", import.meta.url));

const catalogVersion = (k: number) => fixtureCatalogVersion(k, 300);

/** A source data directory that builds catalog versions on demand. */
async function source() {
  const root = await tempDir();
  const dataDir = join(root, "data");
  return {
    dataDir,
    async build(k: number): Promise<string> {
      const catalogDir = await writeCatalog(join(root, "catalog"), catalogVersion(k));
      await buildSnapshot({ catalogDir, dataDir, baseUrl: BASE });
      return (await currentSnapshotId(dataDir))!;
    },
  };
}

describe("ship to a local replica", () => {
  let api: TestApi;
  let reloader: Reloader;
  beforeAll(async () => {
    api = await startTestApi(catalogVersion(0)); // the replica: its server serves version 0, built there
    // Checks `current` every 10 ms, so it looks while the copy runs.
    reloader = createReloader(api.handler, api.dataDir, api.keysFile, { interval: 10 });
  });
  afterAll(async () => {
    reloader.stop();
    await api.close();
  });

  it("three snapshots shipped under continuous requests: no failure, no mixed response, each one served", async () => {
    api.clock.now = T0;
    const src = await source();
    const clients = versionClients(api);
    try {
      for (let k = 1; k <= 3; k++) {
        const id = await src.build(k);
        const result = await shipSnapshot({ dataDir: src.dataDir, to: api.dataDir });
        expect(result.id).toBe(id);
        expect(result.copied).toBeGreaterThan(0);
        await reloader.check();
        expect(api.handler.snapshot().id).toBe(id);
      }
    } finally {
      await clients.stop();
    }
    expect(clients.failures).toEqual([]);
    expect(clients.requests).toBeGreaterThan(20);
    expect([...clients.seen]).toEqual(expect.arrayContaining(["v1", "v2"])); // served while later ones were being copied
    const last = (await api.get(withKey(api, "/v1/sales/active.json")).then((r) => r.json())) as {
      sales: { name: string }[];
    };
    expect(last.sales.every((s) => s.name.endsWith(" v3"))).toBe(true);
    // The replica keeps 3 snapshots, as a build does, and nothing temporary.
    expect((await readdir(join(api.dataDir, "snapshots"))).filter((n) => n.startsWith("."))).toEqual([]);
  }, 120_000);

  it("a ship whose pack is damaged fails, and the replica keeps its current snapshot and serves it", async () => {
    const src = await source();
    await src.build(7);
    const routes = JSON.parse(
      await readFile(join(snapshotDir(src.dataDir, (await currentSnapshotId(src.dataDir))!), ROUTES_FILE), "utf8"),
    ) as { packs: [string, number][] };
    const [name, size] = routes.packs[0]!;
    await truncate(join(src.dataDir, packPath(name)), Math.floor(size / 2));
    const before = await readlink(join(api.dataDir, "current"));
    await expect(shipSnapshot({ dataDir: src.dataDir, to: api.dataDir })).rejects.toThrow(/pack|bytes|digest/i);
    expect(await readlink(join(api.dataDir, "current"))).toBe(before);
    expect((await readdir(join(api.dataDir, "snapshots"))).filter((n) => n.startsWith("."))).toEqual([]);
    expect((await readdir(join(api.dataDir, "packs"))).filter((n) => n.startsWith("."))).toEqual([]);
    await reloader.check();
    const res = await api.get(withKey(api, "/v1/sales/active.json"));
    expect(res.status).toBe(200);
  }, 60_000);
});

describe("ship to an empty replica", () => {
  it("publishes the snapshot there; shipping it again copies no pack", async () => {
    const src = await source();
    const id = await src.build(1);
    const replica = join(await tempDir(), "replica");
    const first = await shipSnapshot({ dataDir: src.dataDir, to: replica });
    expect(first).toMatchObject({ id, present: 0 });
    expect(await currentSnapshotId(replica)).toBe(id);
    expect((await loadSnapshot(replica)).id).toBe(id);
    const again = await shipSnapshot({ dataDir: src.dataDir, to: replica });
    expect(again).toMatchObject({ id, copied: 0, present: first.copied });
  }, 60_000);

  it("over rsync and a remote shell (here a local one standing in for ssh), in the same order", async () => {
    requireProgram("rsync"); // ship runs it from PATH; npm test's first step installs it
    const src = await source();
    const id = await src.build(2);
    const root = await tempDir();
    const replica = join(root, "replica");
    // rsync and the ship's own commands run `<rsh> <host> <command...>`: this one drops the host and runs the command.
    const rsh = join(root, "local-shell");
    await writeFile(rsh, '#!/bin/sh\nshift\nexec sh -c "$*"\n');
    await chmod(rsh, 0o755);
    const result = await shipSnapshot({ dataDir: src.dataDir, to: `replica-host:${replica}`, rsh });
    expect(result.id).toBe(id);
    expect(result.copied).toBeGreaterThan(0);
    expect(await readlink(join(replica, "current"))).toBe(`snapshots/${id}`);
    await verifySnapshot(replica, id);
    expect((await loadSnapshot(replica)).id).toBe(id);
    const again = await shipSnapshot({ dataDir: src.dataDir, to: `replica-host:${replica}`, rsh });
    expect(again.copied).toBe(0);
  }, 60_000);
});

describe("npm run ship", () => {
  it.each([
    [[], /--to is required/],
    [["--to", "x", "--keep", "0"], /--keep must be a whole number/],
    [["--to", "x", "--id", "../etc"], /--id must be a snapshot ID/],
    [["--to", "x", "extra"], /unexpected argument "extra"/],
    [["--bogus"], /Unknown option '--bogus'/],
  ])("%j: exit 2 and one line naming the problem", (args, message) => {
    const run = spawnSync(process.execPath, ["--import", "tsx", "src/cli/ship.ts", ...args], {
      cwd: REPO,
      encoding: "utf8",
    });
    expect(run.status).toBe(2);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
    expect(run.stderr).toMatch(message);
  });
});
