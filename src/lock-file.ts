// A lock file held by one process at a time (the build's, the keys file's writers'); a lock whose process died is taken over.
import { link, readFile, rename, unlink, writeFile } from "node:fs/promises";
import { setTimeout as delay } from "node:timers/promises";

let taken = 0;

/** The lock is held by a live process (`pid`), and was still held when the wait ran out. */
export class LockHeldError extends Error {
  readonly pid: number;
  constructor(lockPath: string, pid: number) {
    super(`${lockPath}: held by process ${pid}`);
    this.name = "LockHeldError";
    this.pid = pid;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The pid written in a lock file; null if there is no such file. */
async function ownerOf(path: string): Promise<number | null> {
  try {
    return Number((await readFile(path, "utf8")).trim());
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
}

/**
 * Removes a lock whose owner died. Renamed aside first and its owner read again there: if another writer took the
 * stale lock over and made its own meanwhile, that is the file moved, and it is put back.
 */
async function takeOver(lockPath: string): Promise<void> {
  const aside = `${lockPath}.stale-${process.pid}`;
  try {
    await rename(lockPath, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
    throw err;
  }
  const pid = await ownerOf(aside);
  if (pid !== null && pid > 0 && alive(pid)) await link(aside, lockPath).catch(() => {});
  await unlink(aside).catch(() => {});
}

/**
 * Takes the lock at `lockPath` (waiting for up to `waitMs`, default 0, while a live process holds it; then
 * LockHeldError) and returns the function that releases it. The lock file is made complete (holding this pid) and
 * then linked into place, which fails if it exists: no one ever reads a half-written lock (and takes it for one
 * whose process died). A lock whose process is dead is taken over.
 */
export async function acquireLock(lockPath: string, waitMs = 0): Promise<() => Promise<void>> {
  const mine = `${lockPath}.${process.pid}-${++taken}`; // one per call: a process may wait for its own lock
  const pid = String(process.pid);
  await writeFile(mine, pid);
  try {
    const deadline = Date.now() + waitMs;
    for (let wait = 2; ; wait = Math.min(wait * 2, 50)) {
      try {
        await link(mine, lockPath);
        return async () => {
          if ((await ownerOf(lockPath)) === process.pid) await unlink(lockPath).catch(() => {});
        };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      }
      const owner = await ownerOf(lockPath);
      if (owner === null) continue; // released meanwhile
      if (!(Number.isInteger(owner) && owner > 0 && alive(owner))) {
        await takeOver(lockPath);
        continue;
      }
      if (Date.now() >= deadline) throw new LockHeldError(lockPath, owner);
      await delay(wait);
    }
  } finally {
    await unlink(mine).catch(() => {});
  }
}
