// `npm start` as the README's quick start runs it: on an empty data directory it builds the sample catalog, makes a
// key, serves, and prints a request that works; over an operator's snapshot it cannot read, it changes nothing.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { readFile, readlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { buildSnapshot } from "../../src/build/index.ts";
import { MANIFEST_FILE, snapshotDir } from "../../src/snapshot/format.ts";
import { currentSnapshotId } from "../../src/snapshot/load.ts";
import { SERVER_NODE_FLAGS } from "../../src/serve/server.ts";
import { BASE, standardCatalog, tempDir, writeCatalog } from "../helpers/fixture.ts";

const REPO = fileURLToPath(new URL("../..", import.meta.url));

/** `npm start`'s program with `env`; its output so far, and a promise of its exit code. */
function start(env: Record<string, string>) {
  const all: NodeJS.ProcessEnv = { ...process.env, HOST: "127.0.0.1", PORT: "0", ...env };
  if (!("BASE_URL" in env)) delete all.BASE_URL; // the default, http://HOST:PORT, as on a fresh machine
  const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, "--import", "tsx", "src/cli/start.ts"], {
    cwd: REPO,
    env: all,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const out = { stdout: "", stderr: "" };
  child.stdout.on("data", (c: Buffer) => (out.stdout += c.toString()));
  child.stderr.on("data", (c: Buffer) => (out.stderr += c.toString()));
  const exited = once(child, "exit").then(([code]) => code as number | null);
  return { child, out, exited };
}

describe("npm start", () => {
  it("on an empty data directory: builds the sample, makes a key, and prints a request that is answered", async () => {
    const root = await tempDir();
    const { child, out, exited } = start({ DATA_DIR: join(root, "data") });
    try {
      const example = await new Promise<string>((resolve, reject) => {
        child.stdout.on("data", () => {
          const m = /curl '([^']+)'/.exec(out.stdout);
          if (m) resolve(m[1]!);
        });
        void exited.then((code) => reject(new Error(`start exited (${code}): ${out.stderr}`)));
      });
      expect(out.stdout).toMatch(/created API key "demo": [A-Za-z0-9]{32}/);
      expect(out.stderr).toMatch(/building the sample catalog \(no snapshot yet\)/);
      const res = await fetch(example);
      expect(res.status).toBe(200);
      const body = (await res.json()) as { sales: unknown[] };
      expect(body.sales.length).toBeGreaterThan(0);
    } finally {
      child.kill("SIGTERM");
      await exited;
    }
  }, 120_000);

  it("over an operator's snapshot of an older format: exits 1 naming it, and leaves it published", async () => {
    const root = await tempDir();
    const dataDir = join(root, "data");
    await buildSnapshot({
      catalogDir: await writeCatalog(join(root, "catalog"), standardCatalog()),
      dataDir,
      baseUrl: BASE,
    });
    const id = (await currentSnapshotId(dataDir))!;
    const manifestFile = join(snapshotDir(dataDir, id), MANIFEST_FILE);
    const manifest = JSON.parse(await readFile(manifestFile, "utf8")) as Record<string, unknown>;
    expect(manifest.source).not.toBe("sample");
    await writeFile(manifestFile, JSON.stringify({ ...manifest, format: 1 }));
    const linkBefore = await readlink(join(dataDir, "current"));

    const { child, out, exited } = start({ DATA_DIR: dataDir, BASE_URL: BASE });
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000); // a start that serves instead never exits
    expect(await exited).toBe(1);
    clearTimeout(timer);
    expect(out.stderr).toContain(`the published snapshot ${id} cannot be read`);
    expect(out.stderr).toContain("it was not built from the sample catalog, so it is left as it is");
    expect(out.stderr).not.toMatch(/building the sample catalog/);
    expect(await readlink(join(dataDir, "current"))).toBe(linkBefore);
    expect(await currentSnapshotId(dataDir)).toBe(id);
  }, 60_000);
});
