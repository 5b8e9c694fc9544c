// A build killed with SIGKILL mid-write or mid-publish leaves the published snapshot serving; the next build cleans up.
import { spawn } from "node:child_process";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import fg from "fast-glob";
import { buildSnapshot } from "../../src/generate/index.ts";
import { loadSnapshot } from "../../src/snapshot/load.ts";
import { product, sale, tempDir, writeCatalog } from "../helpers/fixture.ts";

/** A catalog big enough that its build takes a while: `n` products in one sale, named by `version`. */
function bigCatalog(n: number, version: string) {
  const products = Array.from({ length: n }, (_, i) =>
    product(i + 1, { name: `Boot ${i} ${version}`, content: { description: `Leather ${version}. `.repeat(50) } }),
  );
  return { products, sales: [sale("big", { product_ids: products.map((p) => p.id) })] };
}

/**
 * Runs a build in a child process that stops itself at `phase` (once `fraction` of it is done), then SIGKILLs it
 * there: the kill lands at that point of the build every time, not wherever a file-system event happened to be seen.
 * Returns the line the child wrote, and the temporary files that existed when it was killed.
 */
function buildAndKill(
  catalogDir: string,
  dataDir: string,
  phase: string,
  fraction: number,
): Promise<{ line: string; atKill: string[] }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "test/generate/crash-child.ts", catalogDir, dataDir, phase, String(fraction)],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    let out = "";
    let atKill: string[] = [];
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
      if (!out.includes("\n") || child.killed) return;
      leftovers(dataDir).then((files) => {
        atKill = files;
        child.kill("SIGKILL");
      }, reject);
    });
    child.on("error", reject);
    child.on("exit", (_code, signal) =>
      signal === "SIGKILL" ? resolve({ line: out.trim(), atKill }) : reject(new Error(`child was not killed: ${out}`)),
    );
  });
}

async function leftovers(dataDir: string): Promise<string[]> {
  return fg(["snapshots/.tmp-*", "packs/.tmp-*", "current.tmp-*"], { cwd: dataDir, onlyFiles: false, dot: true });
}

describe("a build killed with SIGKILL", () => {
  it.each([
    ["while writing the pack", "blobs", 0.5, /^packs\/\.tmp-/],
    ["while publishing the snapshot", "verify", 0, /^snapshots\/\.tmp-/],
  ])("%s leaves the published snapshot untouched and the next build cleans up", async (_when, phase, fraction, tmp) => {
    const root = await tempDir();
    const dataDir = join(root, "data");
    const catalogDir = join(root, "catalog");
    await writeCatalog(catalogDir, bigCatalog(1000, "v1"));
    const good = await buildSnapshot({ catalogDir, dataDir, baseUrl: "http://api.test" });

    await writeCatalog(catalogDir, bigCatalog(1000, "v2"));
    const { line, atKill } = await buildAndKill(catalogDir, dataDir, phase, fraction);
    expect(line).toMatch(new RegExp(`^stopped at ${phase} `));
    expect(atKill.some((f) => tmp.test(f))).toBe(true);
    expect((await loadSnapshot(dataDir)).id).toBe(good.id);

    const next = await buildSnapshot({ catalogDir, dataDir, baseUrl: "http://api.test" });
    expect(next.changed).toBe(true);
    expect(await leftovers(dataDir)).toEqual([]);
    expect((await loadSnapshot(dataDir)).id).toBe(next.id);
    expect((await readdir(join(dataDir, "snapshots"))).filter((n) => n.startsWith("."))).toEqual([]);
  });
});
