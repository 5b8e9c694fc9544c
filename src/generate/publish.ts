// Atomic publish: a snapshot is written under a temporary name, verified, renamed, and only then pointed to by `current`.
import { link, mkdir, readdir, readFile, rename, rm, symlink, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import fg from "fast-glob";
import { PACKS_DIR, CURRENT_LINK, ROUTES_FILE, SNAPSHOTS_DIR, snapshotDir } from "../snapshot/format.ts";
import { currentSnapshotId, verifySnapshot } from "../snapshot/load.ts";

/** Snapshots kept for rollback, the published one included. */
export const DEFAULT_KEEP = 3;
const TMP_PREFIX = ".tmp-";

/** Removes what a crashed or killed build left behind: partial snapshot directories, temporary packs and `current` links. */
export async function cleanLeftovers(dataDir: string): Promise<number> {
  const leftovers = await fg(
    [`${SNAPSHOTS_DIR}/${TMP_PREFIX}*`, `${PACKS_DIR}/${TMP_PREFIX}*`, `${CURRENT_LINK}.tmp-*`],
    {
      cwd: dataDir,
      onlyFiles: false,
      dot: true,
    },
  );
  await Promise.all(leftovers.map((p) => rm(join(dataDir, p), { recursive: true, force: true })));
  return leftovers.length;
}

/**
 * Writes the snapshot's own files under a temporary directory name and returns that name. `reused` names files
 * taken unchanged from another snapshot: they are hard-linked, not written again.
 */
export async function writeSnapshotFiles(
  dataDir: string,
  id: string,
  files: Record<string, Uint8Array>,
  reused: Record<string, string> = {},
): Promise<string> {
  const tmpId = `${TMP_PREFIX}${id}`;
  const dir = snapshotDir(dataDir, tmpId);
  await mkdir(dir, { recursive: true });
  for (const [name, from] of Object.entries(reused)) await link(from, join(dir, name));
  for (const [name, bytes] of Object.entries(files)) await writeFile(join(dir, name), bytes);
  return tmpId;
}

/**
 * Verifies the temporary snapshot (verifySnapshot: manifest, digests of its files and of the packs it wrote, sizes
 * of the packs it kept, the search index loads), then renames it into place and switches `current` to it with an
 * atomic rename.
 */
export async function verifyAndPublish(
  dataDir: string,
  tmpId: string,
  id: string,
  keptPacks: ReadonlySet<string> = new Set(),
): Promise<void> {
  await verifySnapshot(dataDir, tmpId, keptPacks);
  await rename(snapshotDir(dataDir, tmpId), snapshotDir(dataDir, id));
  await switchCurrent(dataDir, id);
}

/** Points `current` at snapshot `id`: a new symlink under a temporary name, renamed over the old one. */
export async function switchCurrent(dataDir: string, id: string): Promise<void> {
  const tmp = join(dataDir, `${CURRENT_LINK}.tmp-${process.pid}`);
  await unlink(tmp).catch(() => {});
  await symlink(join(SNAPSHOTS_DIR, id), tmp);
  await rename(tmp, join(dataDir, CURRENT_LINK));
}

/** Published snapshot IDs, oldest first (IDs start with their build time, so they sort by it). */
async function listSnapshots(dataDir: string): Promise<string[]> {
  try {
    return (await readdir(join(dataDir, SNAPSHOTS_DIR))).filter((name) => !name.startsWith(TMP_PREFIX)).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw err;
  }
}

/** Switches `current` back to the snapshot published before it; returns its ID. */
export async function rollback(dataDir: string): Promise<{ from: string; to: string }> {
  const current = await currentSnapshotId(dataDir);
  if (current === null) throw new Error(`nothing is published in ${dataDir}`);
  const older = (await listSnapshots(dataDir)).filter((id) => id < current);
  const to = older[older.length - 1];
  if (to === undefined) throw new Error(`no snapshot older than ${current} is kept in ${dataDir}`);
  await switchCurrent(dataDir, to);
  return { from: current, to };
}

/** Deletes all but the newest `keep` snapshots (never the published one), then every pack none of the kept ones uses. */
export async function pruneSnapshots(dataDir: string, keep: number): Promise<{ snapshots: number; packs: number }> {
  const current = await currentSnapshotId(dataDir);
  const all = await listSnapshots(dataDir);
  const kept = new Set(all.slice(-Math.max(1, keep)));
  if (current) kept.add(current);
  const doomed = all.filter((id) => !kept.has(id));
  if (doomed.length === 0) return { snapshots: 0, packs: 0 };
  for (const id of doomed) await rm(snapshotDir(dataDir, id), { recursive: true, force: true });

  const referenced = new Set<string>();
  for (const id of kept) {
    const routes = JSON.parse(await readFile(join(snapshotDir(dataDir, id), ROUTES_FILE), "utf8")) as {
      packs: [string, number][];
    };
    for (const [name] of routes.packs) referenced.add(`${name}.pack`);
  }
  const files = await fg(`${PACKS_DIR}/*.pack`, { cwd: dataDir, onlyFiles: true });
  const unused = files.filter((f) => !referenced.has(f.slice(f.lastIndexOf("/") + 1)));
  await Promise.all(unused.map((f) => rm(join(dataDir, f), { force: true })));
  return { snapshots: doomed.length, packs: unused.length };
}
