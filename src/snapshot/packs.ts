// The packs a server reads bodies from: opened once, checked against their names through the descriptor they are
// then read from, and closed once no snapshot served uses them.
import { createHash } from "node:crypto";
import { closeSync, fstat, open, read } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { packPath } from "./format.ts";
import { SnapshotError } from "./snapshot-error.ts";

/** An open pack of the data directory, checked against its name once when it was opened. */
export interface PackFile {
  name: string;
  path: string;
  size: number;
  /** Its file descriptor; -1 once closed (a read then fails instead of reading whatever file took the number). */
  fd: number;
}

const openFile = promisify(open);
const fstatFile = promisify(fstat);
const readFd = promisify(read);
/** Bytes read at a time while a pack is checked. */
const CHECK_CHUNK = 4 * 1024 * 1024;

/**
 * A pack opened and checked against its name (the start of its sha256) and recorded size, read through the file
 * descriptor it is then read from: what is checked is what is served, even if the path is replaced meanwhile.
 */
export async function openPack(dataDir: string, name: string, size: number): Promise<PackFile> {
  const path = join(dataDir, packPath(name));
  let fd: number;
  try {
    fd = await openFile(path, "r");
  } catch (err) {
    throw cannotRead(path, err);
  }
  const pack: PackFile = { name, path, size, fd };
  try {
    const hash = createHash("sha256");
    const chunk = Buffer.allocUnsafe(Math.min(CHECK_CHUNK, Math.max(1, size)));
    let total = 0;
    for (;;) {
      const { bytesRead } = await readFd(fd, chunk, 0, chunk.length, total);
      if (bytesRead === 0) break;
      hash.update(chunk.subarray(0, bytesRead));
      total += bytesRead;
    }
    if (total !== size || (await fstatFile(fd)).size !== size || hash.digest("hex").slice(0, 32) !== name)
      throw new SnapshotError(`${path}: content does not match its name and size (corrupt or partly written)`);
    return pack;
  } catch (err) {
    closePacks([pack]);
    throw err instanceof SnapshotError ? err : cannotRead(path, err);
  }
}

const cannotRead = (path: string, err: unknown) =>
  new SnapshotError(`${path}: cannot read pack: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);

/** Closes packs (those no snapshot served any longer uses); a later read of one fails rather than reading another file. */
export function closePacks(packs: Iterable<PackFile>): void {
  for (const pack of packs) {
    if (pack.fd < 0) continue;
    const fd = pack.fd;
    pack.fd = -1;
    closeSync(fd);
  }
}
