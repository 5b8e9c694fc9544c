// The keys file's temporary file (src/keys/keys-file.ts writeKeysFile): created exclusively under a name of its own,
// so a file or a symlink planted where the temporary file used to be (`<keys>.tmp-<pid>`) never gets the keys; the
// keys file is left with mode 0600; nothing temporary is left behind, after a failure either; writers lose nothing.
import { chmod, lstat, mkdir, readdir, readFile, readlink, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createKey, hashKey, loadKeysFile, writeKeysFile } from "../../src/keys/keys-file.ts";
import { tempDir } from "../helpers/fixture.ts";

const PLANTED = "planted by someone else\n";

/** Names in `dir` that look like a keys file's temporary files. */
const leftovers = async (dir: string) => (await readdir(dir)).filter((n) => n.includes(".tmp-"));

describe("writeKeysFile's temporary file", () => {
  it("a file of mode 0644 at the old temporary name is left alone; the keys file has mode 0600", async () => {
    const dir = await tempDir();
    const file = join(dir, "keys.json");
    const planted = `${file}.tmp-${process.pid}`;
    await writeFile(planted, PLANTED);
    await chmod(planted, 0o644);
    const key = await createKey(file, "first");
    expect(await readFile(planted, "utf8")).toBe(PLANTED);
    expect((await stat(planted)).mode & 0o777).toBe(0o644);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await loadKeysFile(file)).keys.map((k) => k.hash)).toEqual([hashKey(key)]);
    expect(await leftovers(dir)).toEqual([`keys.json.tmp-${process.pid}`]);
  });

  it("a symlink at the old temporary name is not written through, dangling or not", async () => {
    const dir = await tempDir();
    const file = join(dir, "keys.json");
    const elsewhere = join(dir, "elsewhere");
    await mkdir(elsewhere);
    const target = join(elsewhere, "existing.json");
    await writeFile(target, PLANTED);
    await chmod(target, 0o644);
    await symlink(target, `${file}.tmp-${process.pid}`);
    await createKey(file, "first");
    expect(await readFile(target, "utf8")).toBe(PLANTED);
    expect((await stat(target)).mode & 0o777).toBe(0o644);
    // Pointing where nothing is yet: no file is made there.
    const dangling = join(elsewhere, "made-by-us.json");
    const second = join(dir, "second.json");
    await symlink(dangling, `${second}.tmp-${process.pid}`);
    await createKey(second, "second");
    expect(await readdir(elsewhere)).toEqual(["existing.json"]);
    expect((await lstat(`${second}.tmp-${process.pid}`)).isSymbolicLink()).toBe(true);
    expect(await readlink(`${second}.tmp-${process.pid}`)).toBe(dangling);
    for (const f of [file, second]) {
      expect((await lstat(f)).isFile()).toBe(true);
      expect((await stat(f)).mode & 0o777).toBe(0o600);
    }
  });

  it("a keys file that had mode 0644 is replaced by one of mode 0600", async () => {
    const dir = await tempDir();
    const file = join(dir, "keys.json");
    await writeFile(file, JSON.stringify({ format: 2, keys: [] }));
    await chmod(file, 0o644);
    await createKey(file, "first");
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await leftovers(dir)).toEqual([]);
  });

  it("a write that fails (the keys file's path is a directory) leaves no temporary file", async () => {
    const dir = await tempDir();
    const file = join(dir, "keys.json");
    await mkdir(join(file, "occupied"), { recursive: true });
    await expect(writeKeysFile(file, { format: 2, keys: [] })).rejects.toThrow(/EISDIR|ENOTEMPTY|EEXIST/);
    expect(await leftovers(dir)).toEqual([]);
  });

  it("loses no key when 12 writers in this process run at once (each with a temporary file of its own)", async () => {
    const dir = await tempDir();
    const file = join(dir, "keys.json");
    const names = Array.from({ length: 12 }, (_, i) => `writer-${i}`);
    const keys = await Promise.all(names.map((name) => createKey(file, name)));
    const records = (await loadKeysFile(file)).keys;
    expect(records.map((r) => r.name).sort()).toEqual([...names].sort());
    for (const [i, key] of keys.entries()) expect(records.find((r) => r.name === names[i])?.hash).toBe(hashKey(key));
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await leftovers(dir)).toEqual([]);
  });
});
