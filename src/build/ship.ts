// Shipping a published snapshot to a replica's data directory, in the order that keeps the replica's server safe:
// the packs it needs first (each under a temporary name, renamed once whole), then the snapshot directory (under a
// temporary name, verified, renamed), and the `current` link last (a new link renamed over the old one). A server
// watching the replica only ever sees `current` move from one whole snapshot to another, as after a local build.
import { execFile } from "node:child_process";
import { copyFile, mkdir, readdir, readFile, rename, stat } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { CURRENT_LINK, PACKS_DIR, packPath, ROUTES_FILE, SNAPSHOTS_DIR, snapshotDir } from "../snapshot/format.ts";
import { currentSnapshotId, verifySnapshot } from "../snapshot/load.ts";
import { acquireBuildLock } from "./lock.ts";
import { cleanLeftovers, pruneSnapshots, switchCurrent } from "./publish.ts";

const run = promisify(execFile);
const TMP_PREFIX = ".tmp-";

export interface ShipOptions {
  /** The data directory the snapshot is published in. */
  dataDir: string;
  /** The replica: a local directory, or `[user@]host:directory` (copied with rsync over ssh). */
  to: string;
  /** The snapshot to ship. Default: the published one. */
  id?: string;
  /** Snapshots the replica keeps, the shipped one included (older ones and their unused packs are deleted). Default 3. */
  keep?: number;
  /** The command rsync runs to reach the host (rsync's --rsh). Default: ssh. */
  rsh?: string;
}

export interface ShipResult {
  id: string;
  /** Packs copied, and packs the replica already had. */
  copied: number;
  present: number;
  /** Bytes copied (packs and snapshot files). */
  bytes: number;
}

/** A remote replica `[user@]host:directory`, as rsync writes it; null for a local path. */
export function remoteOf(to: string): { host: string; dir: string } | null {
  const m = /^([^/:]+):(.*)$/.exec(to);
  return m ? { host: m[1]!, dir: m[2]! || "." } : null;
}

/** Ships snapshot `id` (default: the published one) from `dataDir` to the replica `to`. */
export async function shipSnapshot(options: ShipOptions): Promise<ShipResult> {
  const id = options.id ?? (await currentSnapshotId(options.dataDir));
  if (id === null) throw new Error(`nothing is published in ${options.dataDir}`);
  const source = snapshotDir(options.dataDir, id);
  const routes = JSON.parse(await readFile(join(source, ROUTES_FILE), "utf8")) as { packs: [string, number][] };
  const files = await readdir(source);
  const remote = remoteOf(options.to);
  return remote
    ? shipRemote(options, id, routes.packs, files, remote)
    : shipLocal(options, id, routes.packs, files, options.to);
}

async function shipLocal(
  options: ShipOptions,
  id: string,
  packs: [string, number][],
  files: string[],
  to: string,
): Promise<ShipResult> {
  await mkdir(join(to, PACKS_DIR), { recursive: true });
  await mkdir(join(to, SNAPSHOTS_DIR), { recursive: true });
  // The replica's lock: no second ship (nor a build) into it at once.
  const release = await acquireBuildLock(to);
  try {
    await cleanLeftovers(to);
    const result: ShipResult = { id, copied: 0, present: 0, bytes: 0 };
    const present = new Set<string>();
    for (const [name, size] of packs) {
      const target = join(to, packPath(name));
      // A pack is named by its digest: one of the right size is the same pack (verified below all the same when new).
      if (
        (await stat(target).then(
          (s) => s.size,
          () => -1,
        )) === size
      ) {
        present.add(name);
        result.present++;
        continue;
      }
      const tmp = join(to, PACKS_DIR, `${TMP_PREFIX}${name}.pack`);
      await copyFile(join(options.dataDir, packPath(name)), tmp);
      await rename(tmp, target);
      result.copied++;
      result.bytes += size;
    }
    if ((await stat(snapshotDir(to, id)).catch(() => null)) === null) {
      const tmpId = `${TMP_PREFIX}${id}`;
      await mkdir(snapshotDir(to, tmpId), { recursive: true });
      for (const file of files) {
        await copyFile(join(snapshotDir(options.dataDir, id), file), join(snapshotDir(to, tmpId), file));
        result.bytes += (await stat(join(snapshotDir(to, tmpId), file))).size;
      }
      // What the replica's server would refuse is refused here, before anything points at it.
      await verifySnapshot(to, tmpId, present);
      await rename(snapshotDir(to, tmpId), snapshotDir(to, id));
    } else {
      await verifySnapshot(to, id, present);
    }
    await switchCurrent(to, id);
    await pruneSnapshots(to, options.keep ?? 3);
    return result;
  } catch (err) {
    await cleanLeftovers(to).catch(() => {});
    throw err;
  } finally {
    await release();
  }
}

/** Quotes `s` for a POSIX shell (the remote commands run through ssh). */
function sh(s: string): string {
  return `'${s.replace(/'/g, "'\\''")}'`;
}

async function shipRemote(
  options: ShipOptions,
  id: string,
  packs: [string, number][],
  files: string[],
  { host, dir }: { host: string; dir: string },
): Promise<ShipResult> {
  const rsh = options.rsh ?? "ssh";
  const ssh = (command: string) => run(rsh.split(" ")[0]!, [...rsh.split(" ").slice(1), host, command]);
  const rsync = (args: string[]) => run("rsync", ["--rsh", rsh, ...args]);
  const remoteTmp = `${SNAPSHOTS_DIR}/${TMP_PREFIX}${id}`;
  await ssh(`mkdir -p ${sh(`${dir}/${PACKS_DIR}`)} ${sh(`${dir}/${SNAPSHOTS_DIR}`)}`);
  // Packs: rsync writes each under a temporary name and renames it once whole; --ignore-existing skips the ones the
  // replica has (named by their digests). No snapshot there refers to a new pack until the snapshot is renamed.
  const sent = await rsync([
    "--ignore-existing",
    "--out-format=%n",
    ...packs.map(([name]) => join(options.dataDir, packPath(name))),
    `${host}:${dir}/${PACKS_DIR}/`,
  ]);
  const copied = new Set(sent.stdout.split("\n").filter((line) => line.endsWith(".pack")));
  await rsync(["--recursive", "--delete", `${snapshotDir(options.dataDir, id)}/`, `${host}:${dir}/${remoteTmp}/`]);
  // The snapshot renamed into place (unless it is there already), then `current` switched with a rename.
  const snapshot = `${SNAPSHOTS_DIR}/${id}`;
  const link = `${CURRENT_LINK}.tmp-ship`;
  await ssh(
    [
      `cd ${sh(dir)}`,
      `if [ -d ${sh(snapshot)} ]; then rm -rf ${sh(remoteTmp)}; else mv ${sh(remoteTmp)} ${sh(snapshot)}; fi`,
      `ln -sfn ${sh(snapshot)} ${sh(link)}`,
      `mv -T ${sh(link)} ${CURRENT_LINK}`,
    ].join(" && "),
  );
  let bytes = 0;
  for (const [name, size] of packs) if (copied.has(`${name}.pack`)) bytes += size;
  for (const file of files) bytes += (await stat(join(snapshotDir(options.dataDir, id), file))).size;
  return { id, copied: copied.size, present: packs.length - copied.size, bytes };
}
