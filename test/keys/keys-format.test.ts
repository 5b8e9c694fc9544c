// The keys file's formats: 1 (before rotation) and 2 (before suspension) still load; a file is written in the oldest
// format that holds it (2 unless a key is suspended, 3 then), so that servers still on older code go on reading it;
// a newer format is refused. The key ring refuses a suspended record's key, and the key it replaced, until reinstated.
import { writeFile, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createKey, hashKey, loadKeysFile, parseKeysText, updateKeysFile } from "../../src/keys/keys-file.ts";
import { createKeyRing } from "../../src/serve/admission/api-key-check.ts";
import { tempDir } from "../helpers/fixture.ts";

const KEY = "A".repeat(32);
const OLD = "B".repeat(32);

describe("keys file formats", () => {
  it.each([
    [1, { name: "v1", hash: hashKey(KEY), created: "2026-01-01T00:00:00.000Z", rate: 5 }],
    [2, { name: "v2", hash: hashKey(KEY), created: "2026-01-01T00:00:00.000Z", rotated: "2026-01-02T00:00:00.000Z" }],
    [3, { name: "v3", hash: hashKey(KEY), created: "2026-01-01T00:00:00.000Z", suspended: "2026-01-03T00:00:00.000Z" }],
  ])("reads a format %i file", (format, record) => {
    const file = parseKeysText(JSON.stringify({ format, keys: [record] }), "test");
    expect(file.keys).toEqual([record]);
  });

  it("refuses a format written by newer code, and a record field it does not know", () => {
    expect(() => parseKeysText(JSON.stringify({ format: 4, keys: [] }), "x.json")).toThrow(
      /x\.json: keys file format 4 is not one this code reads \(1, 2, 3\): it was written by newer code/,
    );
    const unknown = { name: "k", hash: hashKey(KEY), created: "2026-01-01T00:00:00.000Z", paused: true };
    expect(() => parseKeysText(JSON.stringify({ format: 3, keys: [unknown] }), "x.json")).toThrow(/invalid keys file/);
  });

  it("writes format 2 until a key is suspended, format 3 while one is, and format 2 again after", async () => {
    const path = join(await tempDir(), "keys.json");
    await createKey(path, "plain");
    const formatOnDisk = async () => (JSON.parse(await readFile(path, "utf8")) as { format: number }).format;
    expect(await formatOnDisk()).toBe(2);
    await updateKeysFile(path, new Date(), (f) => (f.keys[0]!.suspended = new Date().toISOString()));
    expect(await formatOnDisk()).toBe(3);
    await updateKeysFile(path, new Date(), (f) => delete f.keys[0]!.suspended);
    expect(await formatOnDisk()).toBe(2);
    // A format 1 file is rewritten as format 2 by the next change, its records unchanged.
    const v1 = { name: "old", hash: hashKey(KEY), created: "2026-01-01T00:00:00.000Z" };
    await writeFile(path, JSON.stringify({ format: 1, keys: [v1] }));
    await createKey(path, "new");
    expect((await loadKeysFile(path)).keys[0]).toEqual(v1);
    expect(await formatOnDisk()).toBe(2);
  });

  it("the key ring refuses a suspended record's key and the key it replaced (grace period or not), until reinstated", () => {
    const record = {
      name: "p.acct.key",
      hash: hashKey(KEY),
      created: "2026-01-01T00:00:00.000Z",
      previous: [{ hash: hashKey(OLD), until: "2099-01-01T00:00:00.000Z" }],
    };
    const active = createKeyRing([record]);
    expect(active.authenticate(KEY, 0).name).toBe("p.acct.key");
    expect(active.authenticate(OLD, 0).name).toBe("p.acct.key");
    const suspended = createKeyRing([{ ...record, suspended: "2026-02-01T00:00:00.000Z" }]);
    for (const key of [KEY, OLD]) {
      const refused = suspended.check(key, 0);
      expect(refused).toMatchObject({ status: 401, code: "api_key_suspended" });
    }
    expect(suspended.record("p.acct.key")).toBeUndefined();
  });
});
