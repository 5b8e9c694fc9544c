// Loading a snapshot built from a real catalog, and refusing one that is damaged, of another format, or incomplete.
import { createHash } from "node:crypto";
import { cp, readdir, readFile, rm, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { brotliDecompressSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildSnapshot } from "../../src/generate/index.ts";
import type { BlobEntry, Manifest, Routes } from "../../src/snapshot/format.ts";
import {
  CURRENT_LINK,
  MANIFEST_FILE,
  packPath,
  ROUTES_FILE,
  SEARCH_INDEX_FILE,
  SNAPSHOT_FORMAT,
  snapshotDir,
} from "../../src/snapshot/format.ts";
import { currentSnapshotId, loadSnapshot, SnapshotError, verifySnapshot } from "../../src/snapshot/load.ts";
import { BASE, standardCatalog, tempDir, writeCatalog } from "../helpers/fixture.ts";

const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

let root: string;
/** The data directory of a good snapshot, copied for every case that damages one. */
let good: string;
let id: string;
let routes: Routes;
let pack: string;
let packSize: number;

beforeAll(async () => {
  root = await tempDir();
  good = join(root, "good");
  const catalogDir = await writeCatalog(join(root, "catalog"), standardCatalog());
  id = (
    await buildSnapshot({ catalogDir, dataDir: good, baseUrl: BASE, now: () => Date.parse("2026-11-22T12:00:00Z") })
  ).id;
  routes = JSON.parse(await readFile(join(snapshotDir(good, id), ROUTES_FILE), "utf8")) as Routes;
  expect(routes.packs).toHaveLength(1);
  [pack, packSize] = routes.packs[0]!;
}, 60_000);
afterAll(() => rm(root, { recursive: true, force: true }));

let copies = 0;
/** A copy of the good data directory (with its `current` link), to damage. */
async function copyOfGood(): Promise<string> {
  const dataDir = join(root, `copy-${++copies}`);
  await cp(good, dataDir, { recursive: true, verbatimSymlinks: true });
  return dataDir;
}

/** Where each file of the snapshot is, in data directory `d`. */
const at = {
  manifest: (d: string) => join(snapshotDir(d, id), MANIFEST_FILE),
  routes: (d: string) => join(snapshotDir(d, id), ROUTES_FILE),
  search: (d: string) => join(snapshotDir(d, id), SEARCH_INDEX_FILE),
  pack: (d: string) => join(d, packPath(pack)),
};
type File = keyof typeof at;

/** Changes a file's bytes in place. */
async function edit(path: string, change: (bytes: Buffer) => Buffer): Promise<void> {
  await writeFile(path, change(await readFile(path)));
}
/** Flips the lowest bit of the byte in the middle. */
const flip = (b: Buffer) => {
  b[b.length >> 1]! ^= 1;
  return b;
};
const editJson =
  <T>(change: (value: T) => unknown) =>
  (b: Buffer) =>
    Buffer.from(JSON.stringify(change(JSON.parse(b.toString("utf8")) as T)));
/** Rewrites routes.json and records its new digest in the manifest, as a build would: only the checks beyond the digest can refuse it. */
async function rewriteRoutes(d: string, change: (r: Routes) => unknown): Promise<void> {
  const bytes = editJson(change)(await readFile(at.routes(d)));
  await writeFile(at.routes(d), bytes);
  await edit(
    at.manifest(d),
    editJson<Manifest>((m) => ({ ...m, files: { ...m.files, [ROUTES_FILE]: sha(bytes) } })),
  );
}

/** The error a promise is rejected with; fails when it resolves. */
async function refusal(promise: Promise<unknown>): Promise<Error> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SnapshotError);
  return err as Error;
}

interface Damage {
  name: string;
  damage: (dataDir: string) => Promise<void>;
  /** The exact message of the SnapshotError, given the damaged copy's data directory. */
  message: (dataDir: string) => string;
}

const DIGEST = "digest does not match the manifest (corrupt or partly written)";
const PACK_CONTENT = "content does not match its name and size (corrupt or partly written)";

/** Damage that both loadSnapshot (a server) and verifySnapshot (the build, before it publishes) refuse, with one message. */
const REFUSED: Damage[] = [
  {
    name: "a manifest of the next format",
    damage: (d) =>
      edit(
        at.manifest(d),
        editJson<Manifest>((m) => ({ ...m, format: SNAPSHOT_FORMAT + 1 })),
      ),
    message: (d) =>
      `${at.manifest(d)}: snapshot format ${SNAPSHOT_FORMAT + 1}, but this server reads format ${SNAPSHOT_FORMAT}: rebuild the snapshot`,
  },
  {
    name: "a manifest of the previous format",
    damage: (d) =>
      edit(
        at.manifest(d),
        editJson<Manifest>((m) => ({ ...m, format: SNAPSHOT_FORMAT - 1 })),
      ),
    message: (d) =>
      `${at.manifest(d)}: snapshot format ${SNAPSHOT_FORMAT - 1}, but this server reads format ${SNAPSHOT_FORMAT}: rebuild the snapshot`,
  },
  {
    name: "a manifest with no format",
    damage: (d) =>
      edit(
        at.manifest(d),
        editJson<Manifest>(({ format: _, ...m }) => m),
      ),
    message: (d) =>
      `${at.manifest(d)}: snapshot format undefined, but this server reads format ${SNAPSHOT_FORMAT}: rebuild the snapshot`,
  },
  {
    name: "a manifest of this format missing a field",
    damage: (d) =>
      edit(
        at.manifest(d),
        editJson<Manifest>(({ counts: _, ...m }) => m),
      ),
    message: (d) => `${at.manifest(d)}: invalid manifest: counts: Invalid input: expected object, received undefined`,
  },
  {
    name: "a manifest cut short",
    damage: (d) => edit(at.manifest(d), (b) => b.subarray(0, b.length >> 1)),
    message: (d) => `${at.manifest(d)}: manifest is not valid JSON (corrupt or partly written)`,
  },
  {
    name: "a missing manifest",
    damage: (d) => unlink(at.manifest(d)),
    message: (d) => `${at.manifest(d)}: cannot read manifest: ENOENT`,
  },
  {
    name: "a flipped byte in routes.json",
    damage: (d) => edit(at.routes(d), flip),
    message: (d) => `${at.routes(d)}: ${DIGEST}`,
  },
  {
    name: "routes.json cut short",
    damage: (d) => edit(at.routes(d), (b) => b.subarray(0, -1)),
    message: (d) => `${at.routes(d)}: ${DIGEST}`,
  },
  {
    name: "a missing routes.json",
    damage: (d) => unlink(at.routes(d)),
    message: (d) => `${at.routes(d)}: cannot read routes: ENOENT`,
  },
  {
    name: "a flipped byte in search.idx",
    damage: (d) => edit(at.search(d), flip),
    message: (d) => `${at.search(d)}: ${DIGEST}`,
  },
  {
    name: "a missing search.idx",
    damage: (d) => unlink(at.search(d)),
    message: (d) => `${at.search(d)}: cannot read search index: ENOENT`,
  },
  {
    name: "a flipped byte in the pack",
    damage: (d) => edit(at.pack(d), flip),
    message: (d) => `${at.pack(d)}: ${PACK_CONTENT}`,
  },
  {
    name: "a pack one byte short",
    damage: (d) => edit(at.pack(d), (b) => b.subarray(0, -1)),
    message: (d) => `${at.pack(d)}: ${PACK_CONTENT}`,
  },
  {
    name: "a pack one byte long",
    damage: (d) => edit(at.pack(d), (b) => Buffer.concat([b, Buffer.of(0)])),
    message: (d) => `${at.pack(d)}: ${PACK_CONTENT}`,
  },
  {
    name: "a missing pack",
    damage: (d) => unlink(at.pack(d)),
    message: (d) => `${at.pack(d)}: cannot read pack: ENOENT`,
  },
  {
    name: "routes.json (with its digest) placing a blob past its pack's end",
    damage: (d) =>
      rewriteRoutes(d, (r) => ({
        ...r,
        blobs: r.blobs.map((b, i) => (i === 0 ? Object.assign([...b], { 6: packSize }) : b)),
      })),
    message: (d) => `${at.routes(d)}: blob ${routes.blobs[0]![0]} lies outside its pack`,
  },
  {
    name: "routes.json (with its digest) placing a blob in a pack it does not name",
    damage: (d) =>
      rewriteRoutes(d, (r) => ({
        ...r,
        blobs: r.blobs.map((b, i) => (i === 0 ? Object.assign([...b], { 5: 1 }) : b)),
      })),
    message: (d) => `${at.routes(d)}: blob ${routes.blobs[0]![0]} lies outside its pack`,
  },
];

/** routes.json rewritten with its digest updated: refused by a server's load and by the build's check alike. */
const BAD_ROUTES: { name: string; change: (r: Routes) => unknown; message: (d: string) => string }[] = [
  {
    name: "whose resource refers to a blob that does not exist",
    change: (r) => ({ ...r, resources: { ...r.resources, "/v1/sales/active.json": [[null, null, 99_999]] } }),
    message: (d) => `${at.routes(d)}: refers to blob 99999, which does not exist`,
  },
  {
    name: "whose sale list refers to a blob that does not exist",
    change: (r) => ({
      ...r,
      resources: { ...r.resources, "/v1/sales/active.json": [[null, null, { sales: [0, 88_888] }]] },
    }),
    message: (d) => `${at.routes(d)}: refers to blob 88888, which does not exist`,
  },
  {
    name: "whose product refers to a blob that does not exist",
    change: (r) => ({ ...r, products: { ...r.products, 1: 77_777 } }),
    message: (d) => `${at.routes(d)}: refers to blob 77777, which does not exist`,
  },
  {
    name: "whose blob entry lacks a field",
    change: (r) => ({ ...r, blobs: [r.blobs[0]!.slice(0, 7) as unknown as BlobEntry, ...r.blobs.slice(1)] }),
    message: (d) =>
      `${at.routes(d)}: invalid routes: blobs: expected [hash, size, gzip size, brotli size, [link offsets], pack, offset, [gzip pieces]] entries`,
  },
  {
    name: "whose blob hash is not 32 hex digits",
    change: (r) => ({ ...r, blobs: [["XYZ", ...r.blobs[0]!.slice(1)] as BlobEntry, ...r.blobs.slice(1)] }),
    message: (d) =>
      `${at.routes(d)}: invalid routes: blobs: expected [hash, size, gzip size, brotli size, [link offsets], pack, offset, [gzip pieces]] entries`,
  },
  {
    name: "whose sale list has a field besides its sales",
    change: (r) => ({
      ...r,
      resources: {
        ...r.resources,
        "/v1/sales/active.json": [[null, null, { sales: [0], more: [1] } as unknown as { sales: number[] }]],
      },
    }),
    message: (d) =>
      `${at.routes(d)}: invalid routes: resources: expected path -> [from, to, blob or {sales: [blobs]}] segments`,
  },
  {
    name: "whose segment starts at a fraction of a second",
    change: (r) => ({ ...r, resources: { ...r.resources, "/v1/sales/active.json": [[1.5, null, 0]] } }),
    message: (d) =>
      `${at.routes(d)}: invalid routes: resources: expected path -> [from, to, blob or {sales: [blobs]}] segments`,
  },
  {
    name: "whose product's blob is a negative index",
    change: (r) => ({ ...r, products: { ...r.products, 1: -1 } }),
    message: (d) => `${at.routes(d)}: invalid routes: products: expected product ID -> blob index`,
  },
  {
    name: "of another format under a manifest of this one",
    change: (r) => ({ ...r, format: SNAPSHOT_FORMAT + 1 }),
    message: (d) => `${at.routes(d)}: invalid routes: Invalid input: expected ${SNAPSHOT_FORMAT}`,
  },
];

describe("loadSnapshot", () => {
  it("loads the published snapshot: its format, every resource and blob the manifest counts, each blob its hash's bytes", async () => {
    const snapshot = await loadSnapshot(good);
    expect(snapshot.id).toBe(id);
    expect(snapshot.manifest.format).toBe(SNAPSHOT_FORMAT);
    expect(snapshot.manifest.base_url).toBe(BASE);
    expect(snapshot.resources.size).toBe(snapshot.manifest.counts.resources);
    expect(snapshot.blobs.size).toBe(snapshot.manifest.counts.blobs);
    expect([...snapshot.products.keys()].sort()).toEqual([1, 2, 3, 4, 5]);
    expect(snapshot.boundaries).toEqual(routes.boundaries);
    expect([...snapshot.packs.keys()]).toEqual([pack]);
    for (const blob of [...snapshot.blobs.values()].map((ref) => snapshot.bodies.get(ref))) {
      expect(sha(blob.identity).slice(0, 32)).toBe(blob.hash);
      if (blob.br) expect(brotliDecompressSync(blob.br).equals(blob.identity)).toBe(true);
    }
    expect(JSON.parse(snapshot.bodies.get(snapshot.products.get(1)!).identity.toString("utf8"))).toMatchObject({
      id: 1,
    });
  });

  it("loads a snapshot by ID, and reuses the blobs and packs of a previous load instead of reading them again", async () => {
    const first = await loadSnapshot(good, { id });
    expect(await currentSnapshotId(good)).toBe(id);
    const again = await loadSnapshot(good, { id, previous: first });
    expect(again.packs.get(pack)).toBe(first.packs.get(pack));
    for (const [hash, blob] of again.blobs) expect(blob).toBe(first.blobs.get(hash));
  });

  it("refuses a data directory with nothing published", async () => {
    const d = await copyOfGood();
    await unlink(join(d, CURRENT_LINK));
    expect(await currentSnapshotId(d)).toBeNull();
    expect((await refusal(loadSnapshot(d))).message).toBe(`no snapshot is published in ${d} (run the build first)`);
  });

  it.each(REFUSED)("refuses $name, naming the file", async ({ damage, message }) => {
    const d = await copyOfGood();
    await damage(d);
    expect((await refusal(loadSnapshot(d))).message).toBe(message(d));
  });

  it.each(BAD_ROUTES)("refuses routes.json (with its digest) $name", async ({ change, message }) => {
    const d = await copyOfGood();
    await rewriteRoutes(d, change);
    expect((await refusal(loadSnapshot(d))).message).toBe(message(d));
  });

  it("closes the packs it opened when it refuses a snapshot after opening them (a retried load leaks nothing)", async () => {
    const d = await copyOfGood();
    await rewriteRoutes(d, (r) => ({
      ...r,
      blobs: r.blobs.map((b, i) => (i === 0 ? Object.assign([...b], { 6: packSize }) : b)),
    }));
    const open = async () => (await readdir("/proc/self/fd")).length;
    const before = await open();
    for (let i = 0; i < 20; i++) expect((await refusal(loadSnapshot(d))).message).toMatch(/lies outside its pack/);
    expect(await open()).toBe(before);
  });
});

describe("verifySnapshot", () => {
  it.each(BAD_ROUTES)("fails on routes.json (with its digest) $name", async ({ change, message }) => {
    const d = await copyOfGood();
    await rewriteRoutes(d, change);
    expect((await refusal(verifySnapshot(d, id))).message).toBe(message(d));
  });

  it("passes the good snapshot, with its pack checked by content or, trusted, by size", async () => {
    await expect(verifySnapshot(good, id)).resolves.toBeUndefined();
    await expect(verifySnapshot(good, id, new Set([pack]))).resolves.toBeUndefined();
  });

  it.each(REFUSED)("fails on $name, naming the file", async ({ damage, message }) => {
    const d = await copyOfGood();
    await damage(d);
    expect((await refusal(verifySnapshot(d, id))).message).toBe(message(d));
  });

  // A trusted pack was kept from the published snapshot, whose build read and hashed it: only its size is checked.
  it.each<[string, (b: Buffer) => Buffer, (d: string) => string | null]>([
    ["a flipped byte (not read: passes)", flip, () => null],
    ["one byte short", (b) => b.subarray(0, -1), (d) => `${at.pack(d)}: ${packSize - 1} bytes, expected ${packSize}`],
    [
      "one byte long",
      (b) => Buffer.concat([b, Buffer.of(0)]),
      (d) => `${at.pack(d)}: ${packSize + 1} bytes, expected ${packSize}`,
    ],
  ])("a trusted pack with %s", async (_name, change, message) => {
    const d = await copyOfGood();
    await edit(at.pack(d), change);
    const expected = message(d);
    if (expected === null) await expect(verifySnapshot(d, id, new Set([pack]))).resolves.toBeUndefined();
    else expect((await refusal(verifySnapshot(d, id, new Set([pack])))).message).toBe(expected);
  });

  it("fails on a trusted pack that is missing", async () => {
    const d = await copyOfGood();
    await unlink(at.pack(d));
    expect((await refusal(verifySnapshot(d, id, new Set([pack])))).message).toBe(`${at.pack(d)}: missing`);
  });
});

// Every file of the snapshot has a row above: a new file in the format needs its own.
it("the damage table covers every file of the snapshot", () => {
  const files: File[] = ["manifest", "routes", "search", "pack"];
  for (const file of files) expect(REFUSED.some((r) => r.message("/d").startsWith(at[file]("/d")))).toBe(true);
});
