// `npm run keys`: every command, its bad inputs and exit codes, concurrent writers, the lock and the file format.
import { execFile, spawn } from "node:child_process";
import { readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { hashKey, loadKeysFile, updateKeysFile } from "../../src/keys/keys-file.ts";
import { createKeyRing } from "../../src/serve/admission/api-key-check.ts";
import { tempDir } from "../helpers/fixture.ts";

// Vite puts BASE_URL=/ into the test process's environment; the CLI would read it as the API's base URL.
const { BASE_URL: _vite, ...env } = process.env;
interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}
/** Runs the real CLI (as `npm run keys` does) as its own process. */
const keys = (keysFile: string, ...args: string[]) =>
  new Promise<Run>((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", "src/cli/keys.ts", ...args],
      { encoding: "utf8", env: { ...env, KEYS_FILE: keysFile } },
      (err, stdout, stderr) =>
        resolve({ status: err ? (typeof err.code === "number" ? err.code : null) : 0, stdout, stderr }),
    );
  });
const KEY_LINE = /^[A-Za-z0-9]{32}\n$/;
/** Each CLI call starts node and tsx (about a second of CPU): a test making many of them gets more time. */
const SLOW = 240_000;

describe("keys CLI", { timeout: SLOW }, () => {
  it("creates, sets, rotates, lists and revokes keys, storing only hashes", async () => {
    const file = join(await tempDir(), "keys.json");
    const created = await keys(file, "create", "partner-1");
    expect(created.status, created.stderr).toBe(0);
    expect(created.stdout).toMatch(KEY_LINE);
    const key = created.stdout.trim();
    const text = await readFile(file, "utf8");
    expect(text).not.toContain(key);
    expect(text).toContain(hashKey(key));
    expect((await stat(file)).mode & 0o777).toBe(0o600);

    expect((await keys(file, "create", "limited", "--rate", "2.5", "--burst", "10")).status).toBe(0);
    expect((await keys(file, "set", "partner-1", "--rate", "100", "--burst", "400")).status).toBe(0);
    expect((await keys(file, "set", "limited", "--burst", "3")).status).toBe(0);
    const listed = await keys(file, "list");
    expect(listed.stdout).toMatch(
      /^partner-1\trate 100\/s burst 400\tcreated \S+\tactive\nlimited\trate 2\.5\/s burst 3\tcreated \S+\tactive\n$/,
    );
    expect((await keys(file, "set", "limited", "--default")).status).toBe(0);
    expect((await keys(file, "list")).stdout).toMatch(/\nlimited\tdefault limits\t/);

    const rotated = await keys(file, "rotate", "partner-1", "--grace", "2h");
    expect(rotated.status, rotated.stderr).toBe(0);
    expect(rotated.stdout).toMatch(KEY_LINE);
    const newKey = rotated.stdout.trim();
    const record = (await loadKeysFile(file)).keys[0]!;
    expect(record.hash).toBe(hashKey(newKey));
    expect(record.previous).toEqual([{ hash: hashKey(key), until: expect.any(String) as string }]);
    const until = Date.parse(record.previous![0]!.until);
    expect(until - Date.parse(record.rotated!)).toBe(2 * 3_600_000);
    const ring = createKeyRing((await loadKeysFile(file)).keys);
    expect(ring.authenticate(key, until - 1).name).toBe("partner-1");
    expect(ring.authenticate(newKey, until).name).toBe("partner-1");
    expect(() => ring.authenticate(key, until)).toThrow(/grace period has ended/);
    expect((await keys(file, "list")).stdout).toMatch(
      /^partner-1\t.*\tactive, rotated \S+, old key valid until \S+ \(grace period\)\n/,
    );

    // --grace 0: the old key is refused at once; no grace period left to list.
    const now = await keys(file, "rotate", "limited", "--grace", "0");
    expect(now.status, now.stderr).toBe(0);
    expect((await loadKeysFile(file)).keys[1]!.previous).toBeUndefined();

    const revoked = await keys(file, "revoke", "partner-1");
    expect(revoked.status, revoked.stderr).toBe(0);
    const after = await keys(file, "list");
    expect(after.stdout).toMatch(/^partner-1\t.*\trevoked \S+\n/);
    for (const secret of [key, newKey, hashKey(key), hashKey(newKey), "sha256:"])
      expect(after.stdout + after.stderr).not.toContain(secret);
    // Revoking ends the grace period of the replaced key too.
    const revokedRing = createKeyRing((await loadKeysFile(file)).keys);
    expect(() => revokedRing.authenticate(key, 0)).toThrow(/not a valid key/);
  });

  it("lists a key whose account the portal's operator suspended as suspended, not active", async () => {
    const file = join(await tempDir(), "keys.json");
    expect((await keys(file, "create", "p.1.1")).status).toBe(0);
    await updateKeysFile(file, new Date(), (f) => {
      f.keys[0]!.suspended = "2026-11-26T01:00:00.000Z";
    });
    expect((await keys(file, "list")).stdout).toMatch(
      /^p\.1\.1\t.*\tsuspended 2026-11-26T01:00:00\.000Z \(its account, by the portal's operator\)\n/,
    );
  });

  it("answers every bad input with one line on stderr and exit code 2, leaving the file as it was", async () => {
    const file = join(await tempDir(), "keys.json");
    expect((await keys(file, "create", "a", "--rate", "5")).status).toBe(0);
    expect((await keys(file, "create", "gone")).status).toBe(0);
    expect((await keys(file, "revoke", "gone")).status).toBe(0);
    const before = await readFile(file, "utf8");
    const cases: [string[], RegExp][] = [
      [[], /usage:/],
      [["frobnicate"], /unknown command "frobnicate"/],
      [["create"], /create needs a key name/],
      [["create", "a"], /a key named "a" already exists/],
      [["create", "bad name"], /name "bad name" must be/],
      [["create", "x", "--rate", "0"], /--rate: "0" is not a positive number/],
      [["create", "x", "--rate", "abc"], /--rate: "abc"/],
      [["create", "x", "--rate", "5", "--burst", "0"], /--burst: "0" is not a whole number of at least 1/],
      [["create", "x", "--rate", "5", "--burst", "2.5"], /--burst: "2.5"/],
      [["create", "x", "--burst", "5"], /a burst needs a rate of the key's own/],
      [["create", "x", "--bogus"], /Unknown option '--bogus'/],
      [["create", "x", "y"], /unexpected argument "y"/],
      [["set", "a"], /set needs --rate, --burst or --default/],
      [["set", "nobody", "--rate", "5"], /no key named "nobody"/],
      [["set", "gone", "--rate", "5"], /key "gone" was revoked/],
      [["set", "a", "--default", "--rate", "5"], /--default cannot be combined/],
      [["rotate", "nobody"], /no key named "nobody"/],
      [["rotate", "a", "--grace", "5x"], /--grace: "5x" is not a duration/],
      [["rotate", "a", "--grace", "1.5h"], /--grace: "1.5h"/],
      [["rotate", "a", "--grace", "366d"], /--grace: "366d" is longer than 365 days/],
      [["rotate", "a", "--rate", "5"], /rotate takes no --rate/],
      [["revoke", "nobody"], /no key named "nobody"/],
      [["revoke", "gone"], /key "gone" was revoked/],
      [["list", "a"], /list takes no name/],
    ];
    // Four at a time: each is a node process, and the machine running the suite may be busy.
    const runs: Run[] = [];
    for (let i = 0; i < cases.length; i += 4)
      runs.push(...(await Promise.all(cases.slice(i, i + 4).map(([args]) => keys(file, ...args)))));
    runs.forEach((run, i) => {
      const [args, message] = cases[i]!;
      expect({ args, status: run.status, stdout: run.stdout }).toEqual({ args, status: 2, stdout: "" });
      expect(run.stderr).toMatch(/^keys: [^\n]+\n$/);
      expect(run.stderr).toMatch(message);
    });
    expect(await readFile(file, "utf8")).toBe(before);
  });

  it("loses no key when 8 create calls run at once", async () => {
    const file = join(await tempDir(), "keys.json");
    const names = Array.from({ length: 8 }, (_, i) => `concurrent-${i}`);
    const runs = await Promise.all(names.map((name) => keys(file, "create", name)));
    for (const run of runs) expect(run.status, run.stderr).toBe(0);
    const { keys: records } = await loadKeysFile(file);
    expect(records.map((r) => r.name).sort()).toEqual(names);
    const ring = createKeyRing(records);
    runs.forEach((run, i) => expect(ring.authenticate(run.stdout.trim(), 0).name).toBe(names[i]));
    await expect(stat(`${file}.lock`)).rejects.toThrow(/ENOENT/);
  });

  it("takes over a lock left by a dead process", async () => {
    const file = join(await tempDir(), "keys.json");
    const dead = spawn(process.execPath, ["-e", ""]);
    await new Promise((resolve) => dead.on("exit", resolve));
    await writeFile(`${file}.lock`, String(dead.pid));
    const created = await keys(file, "create", "after-crash");
    expect(created.status, created.stderr).toBe(0);
    expect((await loadKeysFile(file)).keys.map((k) => k.name)).toEqual(["after-crash"]);
    await expect(stat(`${file}.lock`)).rejects.toThrow(/ENOENT/);
  });

  it("reads a file written before rotation (format 1) and refuses a format it does not know", async () => {
    const dir = await tempDir();
    const file = join(dir, "keys.json");
    const old = "A".repeat(32);
    // Exactly what the code before rotation wrote.
    const v1 = {
      format: 1,
      keys: [{ name: "old", hash: hashKey(old), created: "2026-01-01T00:00:00.000Z", rate: 5, burst: 10 }],
    };
    await writeFile(file, JSON.stringify(v1, null, 2) + "\n");
    expect((await keys(file, "list")).stdout).toBe(
      "old\trate 5/s burst 10\tcreated 2026-01-01T00:00:00.000Z\tactive\n",
    );
    expect((await keys(file, "create", "new")).status).toBe(0);
    const upgraded = await loadKeysFile(file);
    expect(upgraded.format).toBe(2);
    expect(upgraded.keys[0]).toEqual(v1.keys[0]);
    expect(createKeyRing(upgraded.keys).authenticate(old, 0).name).toBe("old");

    const future = join(dir, "future.json");
    await writeFile(future, JSON.stringify({ format: 4, keys: [] }));
    const refused = await keys(future, "list");
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(
      /^keys: \S+future\.json: keys file format 4 is not one this code reads \(1, 2, 3\): it was written by newer code\n$/,
    );
  });
});
