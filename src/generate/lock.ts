// A build lock: two builds never run at once over one data directory; a lock left by a dead process is taken over.
import { join } from "node:path";
import { acquireLock, LockHeldError } from "../lock-file.ts";

export const LOCK_FILE = "build.lock";

export class BuildLockedError extends Error {
  constructor(pid: number) {
    super(`another build (pid ${pid}) holds the lock; not starting a second one`);
    this.name = "BuildLockedError";
  }
}

/** Takes the lock (or throws BuildLockedError: a build does not wait for another) and returns the function that releases it. */
export async function acquireBuildLock(dataDir: string): Promise<() => Promise<void>> {
  try {
    return await acquireLock(join(dataDir, LOCK_FILE));
  } catch (err) {
    if (err instanceof LockHeldError) throw new BuildLockedError(err.pid);
    throw err;
  }
}
