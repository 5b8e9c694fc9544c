// A build killed with SIGKILL mid-write or mid-publish leaves the published snapshot serving; the next build cleans up.
import { spawn } from "node:child_process";
import { watch } from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import fg from "fast-glob";
import { buildSnapshot } from "../../src/build/index.ts";
import { loadSnapshot } from "../../src/snapshot/load.ts";
import { product, sale, tempDir, writeCatalog } from "../helpers/fixture.ts";

/** A catalog big enough that its build takes a while: `n` products in one sale, named by `version`. */
function bigCatalog(n: number, version: string) {
  const products = Array.from({ length: n }, (_, i) =>
    product(i + 1, { name: `Boot ${i} ${version}`, content: { description: `Leather ${version}. `.repeat(50) } }),
  );
  return { products, sales: [sale("big", { product_ids: products.map((p) => p.id) })] };
}

/** Runs the build CLI in a child process and SIGKILLs it at the first file-system event under `watchDir` matching `match`. */
function buildAndKill(
  catalogDir: string,
  dataDir: string,
  watchDir: string,
  match: RegExp,
): Promise<{ killed: boolean; code: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        "src/cli/build.ts",
        "--catalog",
        catalogDir,
        "--data",
        dataDir,
        "--base-url",
        "http://api.test",
      ],
      { stdio: "ignore" },
    );
    let killed = false;
    const watcher = watch(watchDir, { recursive: true }, (_event, name) => {
      if (!killed && name && match.test(name)) {
        killed = child.kill("SIGKILL");
        watcher.close();
      }
    });
    child.on("error", reject);
    child.on("exit", (code) => {
      watcher.close();
      resolve({ killed, code });
    });
  });
}

async function leftovers(dataDir: string): Promise<string[]> {
  return fg(["snapshots/.tmp-*", "packs/.tmp-*", "current.tmp-*"], { cwd: dataDir, onlyFiles: false, dot: true });
}

describe("a build killed with SIGKILL", () => {
  it.each([
    ["while writing the pack", "packs", /^\.tmp-/],
    ["while publishing the snapshot", "snapshots", /^\.tmp-/],
  ])("%s leaves the published snapshot untouched and the next build cleans up", async (_when, dir, match) => {
    const root = await tempDir();
    const dataDir = join(root, "data");
    const catalogDir = join(root, "catalog");
    await writeCatalog(catalogDir, bigCatalog(1000, "v1"));
    const good = await buildSnapshot({ catalogDir, dataDir, baseUrl: "http://api.test" });

    await writeCatalog(catalogDir, bigCatalog(1000, "v2"));
    const { killed } = await buildAndKill(catalogDir, dataDir, join(dataDir, dir), match);
    expect(killed).toBe(true);
    expect((await loadSnapshot(dataDir)).id).toBe(good.id);

    const next = await buildSnapshot({ catalogDir, dataDir, baseUrl: "http://api.test" });
    expect(next.changed).toBe(true);
    expect(await leftovers(dataDir)).toEqual([]);
    expect((await loadSnapshot(dataDir)).id).toBe(next.id);
    expect((await readdir(join(dataDir, "snapshots"))).filter((n) => n.startsWith("."))).toEqual([]);
  });
});
