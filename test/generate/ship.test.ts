// Shipping snapshots to a replica (src/generate/ship.ts): a server watching the replica while snapshots are copied in
// sees no failure and no response mixing two snapshots; a ship that fails leaves the replica as it was; the remote
// form (rsync over a shell) publishes the same way.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, readdir, readFile, readlink, truncate, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireProgram } from "../../scripts/lib/test-programs.ts";
import { buildSnapshot } from "../../src/generate/index.ts";
import { parseReplica, shipSnapshot } from "../../src/generate/ship.ts";
import { packPath, ROUTES_FILE, snapshotDir } from "../../src/snapshot/format.ts";
import { currentSnapshotId, loadSnapshot, verifySnapshot } from "../../src/snapshot/load.ts";
import { createReloader } from "../../src/serve/http/reloader.ts";
import type { Reloader } from "../../src/serve/http/reloader.ts";
import {
  BASE,
  buildStandardSnapshot,
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
    const { rsh, calls } = await localShell(root);
    const result = await shipSnapshot({ dataDir: src.dataDir, to: `replica-host:${replica}`, rsh });
    expect(result.id).toBe(id);
    expect(result.copied).toBeGreaterThan(0);
    expect(await readlink(join(replica, "current"))).toBe(`snapshots/${id}`);
    await verifySnapshot(replica, id);
    expect((await loadSnapshot(replica)).id).toBe(id);
    const again = await shipSnapshot({ dataDir: src.dataDir, to: `replica-host:${replica}`, rsh });
    expect(again.copied).toBe(0);
    // The ship's own commands put `--` before the host; rsync (with -s) sends no path on the remote command line.
    const lines = await calls();
    expect(lines.filter((l) => l.startsWith("-- replica-host "))).toHaveLength(4);
    const rsyncs = lines.filter((l) => !l.startsWith("-- "));
    expect(rsyncs).toHaveLength(4);
    for (const l of rsyncs) expect(l).toMatch(/^replica-host rsync --server -s\S*$/);
    for (const l of rsyncs) expect(l).not.toContain(replica);
  }, 60_000);

  it("a remote directory with quotes and $(...) in its name is one directory there: nothing in it runs", async () => {
    requireProgram("rsync");
    const src = await source();
    const id = await src.build(3);
    const root = await tempDir();
    // The remote shell runs in `root`: a command in the name would make `root/marker`.
    const replica = join(root, `odd';$(touch\${IFS}marker);\`touch\${IFS}marker\`;'"x`);
    const { rsh } = await localShell(root);
    const result = await shipSnapshot({ dataDir: src.dataDir, to: `replica-host:${replica}`, rsh });
    expect(result.id).toBe(id);
    expect(await readlink(join(replica, "current"))).toBe(`snapshots/${id}`);
    await verifySnapshot(replica, id);
    expect(existsSync(join(root, "marker"))).toBe(false);
    expect((await readdir(root)).sort()).toEqual(["local-shell", "local-shell.log", basename(replica)].sort());
  }, 60_000);

  it.each([
    ["-oProxyCommand=sh", /must not begin with "-"/],
    ["user@-oProxyCommand=sh:dir", /must be a directory or \[user@\]host:directory/],
    ["host;id:dir", /must be a directory or/],
    ["us$er@host:dir", /must be a directory or/],
    ["host:-dir", /remote directory must not begin with "-"/],
    ["host:dir x", /remote directory must not contain white space/],
    ["host:dir\nx", /must not contain control characters/],
  ])("shipSnapshot refuses the replica %j before running anything", async (to, message) => {
    const root = await tempDir();
    const { rsh, calls } = await localShell(root);
    await expect(shipSnapshot({ dataDir: join(root, "none"), to, rsh })).rejects.toThrow(message);
    expect(await calls()).toEqual([]);
  });
});

describe("parseReplica", () => {
  it.each([
    ["/srv/replica/data", null],
    ["relative/dir", null],
    ["./-odd", null],
    ["/a dir/with spaces:and colons", null],
    ["web2:/srv/data", { host: "web2", rsyncHost: "web2", dir: "/srv/data" }],
    [
      "deploy@web2.example.com:data",
      { host: "deploy@web2.example.com", rsyncHost: "deploy@web2.example.com", dir: "data" },
    ],
    ["deploy_1.x@10.0.0.7:", { host: "deploy_1.x@10.0.0.7", rsyncHost: "deploy_1.x@10.0.0.7", dir: "." }],
    ["[::1]:/srv/data", { host: "::1", rsyncHost: "[::1]", dir: "/srv/data" }],
    ["u@[fe80::1]:d", { host: "u@fe80::1", rsyncHost: "u@[fe80::1]", dir: "d" }],
  ])("%j", (to, expected) => {
    expect(parseReplica(to)).toEqual(expected);
  });
});

/**
 * A remote shell for rsync and the ship's own commands, standing in for ssh on this machine: it writes its arguments
 * on a line of `local-shell.log` (`calls` reads them), drops `--` and the host, and runs the command with sh in `root`.
 */
async function localShell(root: string) {
  const rsh = join(root, "local-shell");
  const log = join(root, "local-shell.log");
  await writeFile(
    rsh,
    `#!/bin/sh\necho "$*" >> '${log}'\ncd '${root}'\n[ "$1" = -- ] && shift\nshift\nexec sh -c "$*"\n`,
  );
  await chmod(rsh, 0o755);
  return {
    rsh,
    calls: async () => (existsSync(log) ? (await readFile(log, "utf8")).split("\n").filter(Boolean) : []),
  };
}

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

  describe("refuses a --to that ssh or rsync would read as an option or as more than a host", () => {
    let dataDir: string;
    let root: string;
    // Vite puts BASE_URL=/ into the test process's environment; the CLI would read it as the API's base URL.
    const { BASE_URL: _vite, ...env } = process.env;
    const ship = (args: string[]) =>
      spawnSync(process.execPath, ["--import", "tsx", "src/cli/ship.ts", "--data", dataDir, ...args], {
        cwd: REPO,
        encoding: "utf8",
        env,
      });
    beforeAll(async () => {
      root = await tempDir();
      dataDir = join(root, "data");
      await buildStandardSnapshot(root, dataDir);
    });

    it("the same command with a good --to reaches the remote shell and ships (so the refusals below are the check's)", async () => {
      requireProgram("rsync");
      const { rsh, calls } = await localShell(root);
      const replica = join(root, "good-replica");
      const run = ship([`--to=replica-host:${replica}`, "--rsh", rsh]);
      expect(run.status, run.stderr).toBe(0);
      expect(await readlink(join(replica, "current"))).toMatch(/^snapshots\//);
      expect((await calls()).length).toBeGreaterThan(0);
    }, 60_000);

    // Through the real ssh: if a value reached it as an option, its ProxyCommand would run here and make the marker.
    it.each([
      (m: string) => [`--to=-oProxyCommand=touch ${m}`],
      (m: string) => [`--to=-oProxyCommand=touch ${m}:dir`],
      (m: string) => [`--to=-oProxyCommand=sh -c 'touch ${m}'`, "--rsh", "ssh"],
      (m: string) => ["--to", `-oProxyCommand=touch ${m}`],
    ])("ProxyCommand %#: exit 2, one line naming --to, nothing run", (args) => {
      const marker = join(root, `marker-${Math.random().toString(36).slice(2)}`);
      const run = ship(args(marker));
      expect(run.status).toBe(2);
      expect(run.stderr.trim().split("\n")).toHaveLength(1);
      expect(run.stderr).toMatch(/^ship: .*--to/);
      expect(existsSync(marker)).toBe(false);
    });

    it.each([
      ["-l", /--to must not begin with "-"/],
      ["-oProxyCommand=x:dir", /--to must not begin with "-"/],
      ["user@-oProxyCommand=x:dir", /--to must be a directory or \[user@\]host:directory/],
      ["-user@host:dir", /--to must not begin with "-"/],
      ["us;er@host:dir", /--to must be a directory or/],
      ["host$(touch${IFS}x):dir", /--to must be a directory or/],
      ["ho st:dir", /--to must be a directory or/],
      ["host\t:dir", /--to must not contain control characters/],
      ["host:dir\rx", /--to must not contain control characters/],
      ["host:dir\x1b[2Jx", /--to must not contain control characters/],
      ["host:-dir", /--to's remote directory must not begin with "-"/],
      ["host:dir -e", /--to's remote directory must not contain white space/],
      ["[::1 -oX]:dir", /--to must be a directory or/],
      ["", /--to must not be empty/],
    ])("%j: exit 2, one line naming --to, the remote shell never run", async (to, message) => {
      const { rsh, calls } = await localShell(await tempDir());
      const run = ship([`--to=${to}`, "--rsh", rsh]);
      expect(run.status).toBe(2);
      expect(run.stderr.trim().split("\n")).toHaveLength(1);
      expect(run.stderr).toMatch(message);
      // Control characters are shown escaped, not written to the terminal.
      expect(run.stderr.trim()).not.toMatch(/[\x00-\x1f\x7f]/);
      expect(await calls()).toEqual([]);
    });
  });
});
