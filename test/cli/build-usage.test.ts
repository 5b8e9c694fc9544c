// The build CLI answers a malformed command line with one line on stderr and exit code 2, and builds nothing.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const dataDir = mkdtempSync(join(tmpdir(), "build-usage-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe("npm run build with bad arguments", () => {
  it.each([
    [["--catalog", "x", "--bogus"], /^build: Unknown option '--bogus'; usage: npm run build/],
    [["--catalog", "x", "--keep", "0"], /^build: --keep must be a whole number of at least 1, not "0"$/],
    [["--catalog", "x", "--keep", "two"], /^build: --keep must be a whole number of at least 1, not "two"$/],
    [["--catalog", "x", "--every", "5x"], /^build: --every: "5x" is not an interval like 30s, 5m or 1h$/],
    [["--catalog"], /^build: Option '--catalog <value>' argument missing; usage: /],
  ])("%j exits 2: %s", (args, message) => {
    const run = spawnSync(
      process.execPath,
      ["--import", "tsx", "src/cli/build.ts", "--data", dataDir, "--base-url", "http://api.test", ...args],
      { encoding: "utf8" },
    );
    expect(run.status).toBe(2);
    expect(run.stderr.split("\n")[0]).toMatch(message);
    expect(run.stdout).toBe("");
    expect(readdirSync(dataDir)).toEqual([]);
  });
});
