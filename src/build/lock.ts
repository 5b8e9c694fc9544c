// A build lock: two builds never run at once over one data directory; a lock left by a dead process is taken over.
import { open, readFile, unlink } from "node:fs/promises";
import { join } from "node:path";

export const LOCK_FILE = "build.lock";

export class BuildLockedError extends Error {
  constructor(pid: number) {
    super(`another build (pid ${pid}) holds the lock; not starting a second one`);
    this.name = "BuildLockedError";
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

/** Takes the lock (or throws BuildLockedError) and returns the function that releases it. */
export async function acquireBuildLock(dataDir: string): Promise<() => Promise<void>> {
  const path = join(dataDir, LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(path, "wx");
      await handle.writeFile(String(process.pid));
      await handle.close();
      return () => unlink(path).catch(() => {});
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const pid = Number((await readFile(path, "utf8").catch(() => "")).trim());
      if (Number.isInteger(pid) && pid > 0 && alive(pid)) throw new BuildLockedError(pid);
      await unlink(path).catch(() => {}); // stale: its build died without releasing it
    }
  }
  throw new Error(`could not take the build lock ${path}`);
}
