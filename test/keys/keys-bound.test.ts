// The keys file's size is bounded by its live keys (issue 32, item 6): a rotation ends the grace of the key replaced
// before, so 200 rotations in a row leave one old key and not a byte more; revoked records (tombstones) are dropped
// after KEEP_REVOKED_MS, and a portal account keeps its 20 newest; a file written by older code with several old keys
// per key keeps the latest at its next change.
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  createKey,
  hashKey,
  KEEP_REVOKED_MS,
  loadKeysFile,
  revokeKey,
  rotateKey,
  updateKeysFile,
  writeKeysFile,
} from "../../src/keys/keys-file.ts";
import { tempDir } from "../helpers/fixture.ts";

const T0 = Date.parse("2026-11-27T10:00:00.000Z");
const WEEK = 7 * 86_400_000;

describe("the keys file's bound", () => {
  it("keeps one old key through 200 rotations in a row with a 7-day grace: the file stays the size it was", async () => {
    const file = join(await tempDir(), "keys.json");
    const first = await createKey(file, "rotated", new Date(T0));
    const second = await rotateKey(file, "rotated", WEEK, new Date(T0 + 1000));
    const size = (await stat(file)).size;
    let last = second;
    for (let i = 2; i <= 200; i++) last = await rotateKey(file, "rotated", WEEK, new Date(T0 + i * 1000));
    const [record] = (await loadKeysFile(file)).keys;
    expect(record!.previous).toHaveLength(1);
    expect(record!.hash).toBe(hashKey(last));
    expect([first, second].map(hashKey)).not.toContain(record!.previous![0]!.hash); // refused since
    expect((await stat(file)).size).toBe(size);
    // A rotation with no grace leaves none.
    await rotateKey(file, "rotated", 0, new Date(T0 + 300_000));
    expect((await loadKeysFile(file)).keys[0]!.previous).toBeUndefined();
  });

  it("drops revoked records after KEEP_REVOKED_MS, and keeps a portal account's 20 newest", async () => {
    const file = join(await tempDir(), "keys.json");
    for (let i = 0; i < 30; i++) {
      await createKey(file, `p.acct.k${i}`, new Date(T0 + i));
      await revokeKey(file, `p.acct.k${i}`, new Date(T0 + i));
    }
    await createKey(file, "operator", new Date(T0));
    await revokeKey(file, "operator", new Date(T0));
    await createKey(file, "p.other.k0", new Date(T0));
    let keys = (await loadKeysFile(file)).keys;
    expect(keys.filter((k) => k.name.startsWith("p.acct.")).map((k) => k.name)).toEqual(
      Array.from({ length: 20 }, (_, i) => `p.acct.k${i + 10}`),
    );
    expect(keys.map((k) => k.name)).toContain("operator"); // a key npm run keys made: by time only
    await updateKeysFile(file, new Date(T0 + KEEP_REVOKED_MS + 1000), () => {});
    keys = (await loadKeysFile(file)).keys;
    expect(keys.map((k) => k.name)).toEqual(["p.other.k0"]); // the live key alone
  });

  it("keeps only the latest old key of a file written by older code, at its next change", async () => {
    const file = join(await tempDir(), "keys.json");
    const until = (days: number) => new Date(T0 + days * 86_400_000).toISOString();
    const hash = (n: number) => `sha256:${String(n).padStart(64, "0")}`;
    const previous = [1, 5, 3].map((d) => ({ hash: hash(d), until: until(d) }));
    await writeKeysFile(file, {
      format: 2,
      keys: [{ name: "old", hash: hash(9), created: new Date(T0).toISOString(), previous }],
    });
    await updateKeysFile(file, new Date(T0), () => {});
    expect((await loadKeysFile(file)).keys[0]!.previous).toEqual([{ hash: hash(5), until: until(5) }]);
  });
});
