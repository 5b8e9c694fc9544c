// `npm run keys`: create prints the key alone on stdout; the file holds only its hash; list and revoke.
import { spawnSync } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { hashKey } from "../../src/keys/keys-file.ts";
import { tempDir } from "../helpers/fixture.ts";

// Vite puts BASE_URL=/ into the test process's environment; the CLI would read it as the API's base URL.
const { BASE_URL: _vite, ...env } = process.env;
const keys = (keysFile: string, ...args: string[]) =>
  spawnSync(process.execPath, ["--import", "tsx", "src/cli/keys.ts", ...args], { encoding: "utf8", env: { ...env, KEYS_FILE: keysFile } });

describe("keys CLI", () => {
  it("creates, lists and revokes keys, storing only hashes", async () => {
    const file = join(await tempDir(), "keys.json");
    const created = keys(file, "create", "partner-1");
    expect(created.status, created.stderr).toBe(0);
    expect(created.stdout).toMatch(/^[A-Za-z0-9]{32}\n$/);
    const key = created.stdout.trim();
    const text = await readFile(file, "utf8");
    expect(text).not.toContain(key);
    expect(text).toContain(hashKey(key));

    expect(keys(file, "create", "partner-1").status).toBe(1); // names are unique
    expect(keys(file, "list").stdout).toMatch(/^partner-1\tcreated \S+\tactive\n$/);
    const revoked = keys(file, "revoke", "partner-1");
    expect(revoked.status, revoked.stderr).toBe(0);
    expect(keys(file, "list").stdout).toMatch(/\trevoked \S+\n$/);
    expect(keys(file, "revoke", "nobody").stderr).toContain('no key named "nobody"');
    expect(keys(file, "frobnicate").status).toBe(2);
  });
});
