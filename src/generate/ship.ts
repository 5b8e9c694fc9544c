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
  /**
   * The replica: a local directory, or `[user@]host:directory` (copied with rsync over ssh); see parseReplica for
   * what is refused.
   */
  to: string;
  /** The snapshot to ship. Default: the published one. */
  id?: string;
  /** Snapshots the replica keeps, the shipped one included (older ones and their unused packs are deleted). Default 3. */
  keep?: number;
  /**
   * The command rsync runs to reach the host (rsync's --rsh), split at spaces. The ship's own commands run it as
   * `<rsh> -- <host> <command>`, as ssh takes them. Default: ssh.
   */
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

/** A `--to` value that is no replica this code will ship to: `message` says why (it names the value, escaped). */
export class ReplicaError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ReplicaError";
  }
}

/** A remote replica: `host` as ssh takes it (`[user@]host`, an IPv6 address without brackets), `dir` on it. */
export interface RemoteReplica {
  host: string;
  /** The same host as rsync takes it before `:` (an IPv6 address in brackets). */
  rsyncHost: string;
  dir: string;
}

/** A user name: letters, digits, `_` `.` `-`, not beginning with `-` or `.`. */
const USER = String.raw`[A-Za-z0-9_][A-Za-z0-9._-]{0,31}`;
/** A host name or IPv4 address (letters, digits, `.` `-`, beginning with a letter or digit), or `[IPv6]`. */
const HOST = String.raw`[A-Za-z0-9][A-Za-z0-9.-]{0,252}|\[[0-9A-Fa-f:.]{2,45}\]`;
const REMOTE_RE = new RegExp(String.raw`^(?:(${USER})@)?(${HOST}):(.*)$`, "s");

/**
 * Parses a replica as `--to` gives it: `[user@]host:dir` (a colon before any slash, as rsync reads it) is remote,
 * anything else a local directory. Throws a ReplicaError, whose message follows `name`, for a value that could reach
 * ssh or rsync as an option or as more than one word: one beginning with `-`, with a control character, a user or
 * host outside their conservative character sets, or a remote directory with white space or beginning with `-`.
 */
export function parseReplica(to: string, name = "the replica"): RemoteReplica | null {
  const shown = JSON.stringify(to);
  if (to === "") throw new ReplicaError(`${name} must not be empty`);
  if (/[\x00-\x1f\x7f]/.test(to)) throw new ReplicaError(`${name} must not contain control characters, not ${shown}`);
  if (to.startsWith("-")) {
    throw new ReplicaError(`${name} must not begin with "-" (ssh or rsync would take it for an option), not ${shown}`);
  }
  if (!/^[^/:]*(?:\[[^\]/]*\])?:/.test(to)) return null;
  const m = REMOTE_RE.exec(to);
  if (!m) {
    throw new ReplicaError(
      `${name} must be a directory or [user@]host:directory, with a user and host of letters, digits, "." "_" "-" (not beginning with "-"), or [IPv6]:directory, not ${shown}`,
    );
  }
  const [, user, host, dir] = m as unknown as [string, string | undefined, string, string];
  if (/\s/.test(dir)) throw new ReplicaError(`${name}'s remote directory must not contain white space, not ${shown}`);
  if (dir.startsWith("-")) throw new ReplicaError(`${name}'s remote directory must not begin with "-", not ${shown}`);
  const bare = host.startsWith("[") ? host.slice(1, -1) : host;
  const at = user === undefined ? "" : `${user}@`;
  return { host: at + bare, rsyncHost: at + host, dir: dir || "." };
}

/** Ships snapshot `id` (default: the published one) from `dataDir` to the replica `to`. */
export async function shipSnapshot(options: ShipOptions): Promise<ShipResult> {
  const remote = parseReplica(options.to);
  const id = options.id ?? (await currentSnapshotId(options.dataDir));
  if (id === null) throw new Error(`nothing is published in ${options.dataDir}`);
  const source = snapshotDir(options.dataDir, id);
  const routes = JSON.parse(await readFile(join(source, ROUTES_FILE), "utf8")) as { packs: [string, number][] };
  const files = await readdir(source);
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
  { host, rsyncHost, dir }: RemoteReplica,
): Promise<ShipResult> {
  const rsh = options.rsh ?? "ssh";
  // `--` ends ssh's options: the host is never read as one (parseReplica refuses such hosts too).
  const ssh = (command: string) => run(rsh.split(" ")[0]!, [...rsh.split(" ").slice(1), "--", host, command]);
  // -s (--secluded-args, called --protect-args before rsync 3.2.6; -s in every rsync since 3.0): the remote paths
  // go to the remote rsync through its protocol, never through the remote shell's command line, whatever
  // RSYNC_OLD_ARGS says. `--` ends rsync's options: no path is read as one.
  const rsync = (args: string[], paths: string[]) => run("rsync", ["--rsh", rsh, "-s", ...args, "--", ...paths]);
  const remoteTmp = `${SNAPSHOTS_DIR}/${TMP_PREFIX}${id}`;
  await ssh(`mkdir -p -- ${sh(`${dir}/${PACKS_DIR}`)} ${sh(`${dir}/${SNAPSHOTS_DIR}`)}`);
  // Packs: rsync writes each under a temporary name and renames it once whole; --ignore-existing skips the ones the
  // replica has (named by their digests). No snapshot there refers to a new pack until the snapshot is renamed.
  const sent = await rsync(
    ["--ignore-existing", "--out-format=%n"],
    [...packs.map(([name]) => join(options.dataDir, packPath(name))), `${rsyncHost}:${dir}/${PACKS_DIR}/`],
  );
  const copied = new Set(sent.stdout.split("\n").filter((line) => line.endsWith(".pack")));
  await rsync(
    ["--recursive", "--delete"],
    [`${snapshotDir(options.dataDir, id)}/`, `${rsyncHost}:${dir}/${remoteTmp}/`],
  );
  // The snapshot renamed into place (unless it is there already), then `current` switched with a rename.
  const snapshot = `${SNAPSHOTS_DIR}/${id}`;
  const link = `${CURRENT_LINK}.tmp-ship`;
  await ssh(
    [
      `cd -- ${sh(dir)}`,
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
