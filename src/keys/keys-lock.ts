// The keys file's writers' lock: one change at a time, so that two CLI calls at once never lose a key.
import { acquireLock, LockHeldError } from "../lock-file.ts";

/** How long a writer waits for another writer's lock before giving up, ms. */
const DEFAULT_LOCK_WAIT = 30_000;

export class KeysLockedError extends Error {
  constructor(lockPath: string, pid: number, waitMs: number) {
    super(
      `${lockPath}: held by process ${pid} for more than ${waitMs / 1000} s; if that process is not a keys command, remove the lock file`,
    );
    this.name = "KeysLockedError";
  }
}

/** Takes `<keysFile>.lock`, waiting for up to `waitMs` (default DEFAULT_LOCK_WAIT) while another writer holds it. */
export async function acquireKeysLock(keysFile: string, waitMs = DEFAULT_LOCK_WAIT): Promise<() => Promise<void>> {
  const lockPath = `${keysFile}.lock`;
  try {
    return await acquireLock(lockPath, waitMs);
  } catch (err) {
    if (err instanceof LockHeldError) throw new KeysLockedError(lockPath, err.pid, waitMs);
    throw err;
  }
}
