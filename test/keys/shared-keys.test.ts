// KEYS_SYNC=shared in one process against a real redis-server: two machines' keys files (each with its own
// transport, as two processes would have) changing the keys in Redis at once lose nothing; a Redis found empty gets
// the newest copy whichever machine gives its copy first, and a version made since is never overwritten; without
// Redis a change fails at once, changing nothing; a keys file that follows Redis refuses to be changed directly.
import { once } from "node:events";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startKeySync } from "../../src/keys/key-sync.ts";
import { createKey, loadKeysFile, parseKeysText, renderKeysFile, revokeKey } from "../../src/keys/keys-file.ts";
import { changeFileOf, KeysUnavailableError, routeKeysChanges } from "../../src/keys/keys-store.ts";
import { readLocalCopy, writeLocalCopy } from "../../src/keys/local-copy.ts";
import { connectKeysRedis, digestOf, KEYS_DOC } from "../../src/keys/redis-keys.ts";
import type { KeysRedis } from "../../src/keys/redis-keys.ts";
import { copyToSeed, createSharedKeysStore, HELD_FIELDS, heldOf, seedKeys } from "../../src/keys/shared-keys.ts";
import { freePort, tempDir } from "../helpers/fixture.ts";
import { startRedis, stopProcess } from "../helpers/processes.ts";
import type { Watched } from "../helpers/processes.ts";

const created = "2026-01-01T00:00:00.000Z";
/** A keys file's text with keys named `names` (hashes made up: they are never used as keys here). */
const keysText = (...names: string[]) =>
  renderKeysFile({
    format: 2,
    keys: names.map((name, i) => ({ name, hash: `sha256:${String(i).padStart(64, "0")}`, created })),
  });
const namesIn = (text: string) => parseKeysText(text, "test").keys.map((k) => k.name);

describe("KEYS_SYNC=shared: the keys in Redis, changed by every machine", () => {
  let redis: Watched;
  let port: number;
  let root: string;
  let db = 0; // each case on a Redis database of its own
  const opened: { close(): Promise<void> }[] = [];
  const url = () => `redis://127.0.0.1:${port}/${db}`;
  /** A machine: its keys file, and a shared transport whose store its changes go to (as KEYS_SYNC=shared sets up). */
  const machine = (name: string, redisUrl = url()) => {
    const keysFile = join(root, `${db}-${name}.json`);
    const seeded: number[] = [];
    let inStep = () => {};
    const synced = new Promise<void>((resolve) => (inStep = resolve));
    const sync = startKeySync({
      redisUrl,
      keysFile,
      role: "shared",
      onSeeded: (c) => seeded.push(c),
      onSynced: () => inStep(),
    });
    const unroute = routeKeysChanges(keysFile, sync.store!);
    opened.push({ close: () => (unroute(), sync.close()) });
    return { keysFile, sync, seeded, synced };
  };
  const client = async () => {
    const c = connectKeysRedis(url(), "test");
    opened.push({ close: () => Promise.resolve(c.disconnect()) });
    await once(c, "ready");
    return c;
  };
  const held = async (c: KeysRedis) => {
    const [change, text, seeded] = await c.hmget(KEYS_DOC, "change", "text", "seeded");
    return { change: Number(change), names: text ? namesIn(text) : [], seeded };
  };

  beforeAll(async () => {
    root = await tempDir();
    port = await freePort();
    redis = await startRedis(port);
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((o) => o.close()));
    db++;
  });
  afterAll(() => stopProcess(redis, "SIGKILL"));

  it("takes 20 creations from each of two machines at once, interleaved: all 40 are kept, in Redis and both copies", async () => {
    const a = machine("a");
    const b = machine("b");
    const made = await Promise.all(
      Array.from({ length: 40 }, (_, i) => createKey(i % 2 ? b.keysFile : a.keysFile, `k${i}`, new Date())),
    );
    expect(new Set(made).size).toBe(40);
    const c = await client();
    const inRedis = await held(c);
    expect(inRedis.names.sort()).toEqual(Array.from({ length: 40 }, (_, i) => `k${i}`).sort());
    // Redis started empty: a machine with no keys file gave it an empty set (change 0), then 40 changes.
    expect(inRedis.change).toBe(40);
    await Promise.all([a.sync.sync(), b.sync.sync()]);
    for (const m of [a, b]) {
      const copy = (await readLocalCopy(m.keysFile))!;
      expect(namesIn(copy.text).sort()).toEqual(inRedis.names.sort());
      expect(copy.change).toBe(40);
    }
    // A change that cannot be made (a duplicate name) changes nothing anywhere.
    await expect(createKey(a.keysFile, "k3", new Date())).rejects.toThrow(/a key named "k3" already exists/);
    expect((await held(c)).change).toBe(40);
    await revokeKey(b.keysFile, "k0"); // made through A, revoked through B
    await a.sync.sync();
    expect((await loadKeysFile(a.keysFile)).keys.find((k) => k.name === "k0")?.revoked).toBeDefined();
  });

  it("gives an empty Redis the newest machine's copy, in either order, and never overwrites a version made since", async () => {
    const c = await client();
    const older = join(root, `${db}-older.json`);
    const newer = join(root, `${db}-newer.json`);
    await writeLocalCopy(older, { change: 5, digest: digestOf(keysText("x")), text: keysText("x") });
    await writeLocalCopy(newer, { change: 7, digest: digestOf(keysText("x", "y")), text: keysText("x", "y") });
    const seedFrom = async (file: string) => {
      const held = heldOf(await c.hmget(KEYS_DOC, ...HELD_FIELDS));
      const copy = await copyToSeed(file, held, false);
      return copy ? seedKeys(c, held, copy) : false;
    };
    // The older copy first: replaced by the newer one, which no older copy then replaces.
    expect(await seedFrom(older)).toBe(true);
    expect(await seedFrom(newer)).toBe(true);
    expect(await seedFrom(older)).toBe(false);
    expect(await held(c)).toEqual({ change: 7, names: ["x", "y"], seeded: "1" });
    // The newer first, in another database: the older is refused.
    await c.select(db + 8);
    expect(await seedFrom(newer)).toBe(true);
    expect(await seedFrom(older)).toBe(false);
    expect(await held(c)).toEqual({ change: 7, names: ["x", "y"], seeded: "1" });
    await c.select(db);

    // A writer whose copy is older than what Redis was given builds on Redis's; one whose copy is newer gives it first.
    // (Its copy is written before its sync starts: a file written behind a running sync's back races with the
    // follower, which may have taken Redis's keys as the copy of a machine that had none.)
    await writeLocalCopy(join(root, `${db}-writer.json`), {
      change: 9,
      digest: digestOf(keysText("x", "y", "z")),
      text: keysText("x", "y", "z"),
    });
    const writer = machine("writer");
    await writer.synced;
    await createKey(writer.keysFile, "w", new Date());
    expect(writer.seeded).toContain(9);
    expect(await held(c)).toEqual({ change: 10, names: ["x", "y", "z", "w"], seeded: null });
    // A version made since a copy was given is Redis's own: no machine's copy replaces it, however new.
    await writeLocalCopy(newer, { change: 99, digest: digestOf(keysText("old")), text: keysText("old") });
    expect(await seedFrom(newer)).toBe(false);
    expect((await held(c)).names).toEqual(["x", "y", "z", "w"]);
  });

  it("a machine's transport gives an empty Redis its copy by itself, and follows what Redis holds after", async () => {
    const file = join(root, `${db}-m.json`);
    await writeLocalCopy(file, { change: 3, digest: digestOf(keysText("kept")), text: keysText("kept") });
    const m = machine("m"); // the same file name: `${db}-m.json`
    expect(m.keysFile).toBe(file);
    await m.synced; // given, then followed
    expect(m.seeded).toEqual([3]);
    const c = await client();
    expect(await held(c)).toEqual({ change: 3, names: ["kept"], seeded: "1" });
    await createKey(file, "next", new Date());
    expect(namesIn(await readFile(file, "utf8"))).toEqual(["kept", "next"]);
    expect((await readLocalCopy(file))!.change).toBe(4);
  });

  it("without Redis a change fails at once with a clear error, and the keys file is left as it was", async () => {
    const m = machine("down", `redis://127.0.0.1:${await freePort()}`);
    await writeFile(m.keysFile, keysText("before"));
    const before = await readFile(m.keysFile, "utf8");
    const started = performance.now();
    const failure = await createKey(m.keysFile, "lost", new Date()).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(KeysUnavailableError);
    expect((failure as Error).message).toMatch(
      /kept in Redis \(KEYS_SYNC=shared\), which does not answer: nothing was changed/,
    );
    expect(performance.now() - started).toBeLessThan(3_000); // it waits for a connection 2 s, no more
    expect(await readFile(m.keysFile, "utf8")).toBe(before);
  });

  it("a keys file that follows Redis refuses a change made to it directly (it would be overwritten)", async () => {
    const file = join(root, `${db}-copy.json`);
    await writeLocalCopy(file, { change: 1, digest: digestOf(keysText("a")), text: keysText("a") });
    await expect(createKey(file, "b", new Date())).rejects.toThrow(
      /is a copy of the keys in Redis .*run with KEYS_SYNC=shared/,
    );
    expect(namesIn(await readFile(file, "utf8"))).toEqual(["a"]);
    expect(changeFileOf(file)).toBe(`${file}.sync`);
  });
  it("a change made while this process is stalled past the command deadline is made: the reply is read, not refused", async () => {
    const c = await client();
    const busy = (ms: number) => {
      const until = performance.now() + ms;
      while (performance.now() < until);
    };
    // The real client, except that right after each command is sent the process is kept busy for three times the
    // deadline (as 40 requests at once on a loaded machine may): Redis answers meanwhile, and the reply waits.
    const stalling = new Proxy(c, {
      get(target, prop, receiver) {
        const value: unknown = Reflect.get(target, prop, receiver);
        if (typeof value !== "function" || !["hmget", "hget", "seedKeys", "updateKeys"].includes(String(prop)))
          return value;
        return (...args: unknown[]) => {
          const sent: unknown = (value as (...a: unknown[]) => unknown).apply(target, args);
          setImmediate(() => busy(60));
          return sent;
        };
      },
    });
    const store = createSharedKeysStore({
      client: stalling,
      keysFile: join(root, `${db}-stalled.json`),
      follow: () => Promise.resolve(),
      deadlineMs: 20,
    });
    for (let i = 0; i < 10; i++) {
      await store.update(new Date(), (file) => {
        file.keys.push({ name: `k${i}`, hash: `sha256:${String(i).padStart(64, "0")}`, created });
      });
    }
    expect((await held(c)).names).toEqual(Array.from({ length: 10 }, (_, i) => `k${i}`));
  });
});
