// Hot reload: notices a newly published snapshot or a changed keys file and swaps the handler to them.
import { watch } from "node:fs";
import type { FSWatcher } from "node:fs";
import { readlink, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { CURRENT_LINK } from "../../snapshot/format.ts";
import type { Handler } from "../handler.ts";

/** How often to look for a new snapshot or keys file, ms. */
export const DEFAULT_RELOAD_INTERVAL = 2_000;

export interface Reloader {
  /** Looks once now; resolves when any reload it started has finished. */
  check(): Promise<void>;
  stop(): void;
}

/**
 * Polls `current` and the keys file (cheap: one readlink and one stat) and calls `handler.reload()` when either
 * changed. A failed reload (a corrupt new snapshot) keeps the old one serving and is reported through `onError`.
 * With `watchKeys`, the keys file's directory is also watched (inotify on Linux), so that a key created, revoked or
 * suspended is applied within milliseconds rather than at the next poll; where watching is not possible (no such
 * directory yet, a network file system) the poll alone does it, within `interval`.
 */
export function createReloader(
  handler: Handler,
  dataDir: string,
  keysFile: string,
  options: {
    /** How often to poll, ms. Default DEFAULT_RELOAD_INTERVAL (2 s). */
    interval?: number;
    /** Also reload as soon as the keys file is replaced (fs.watch on its directory). Default false: the poll only. */
    watchKeys?: boolean;
    onReload?: (snapshotId: string) => void;
    onError?: (err: unknown) => void;
  } = {},
): Reloader {
  const fingerprint = async () => {
    const link = await readlink(join(dataDir, CURRENT_LINK)).catch(() => "");
    const keys = await stat(keysFile).then(
      (s) => `${s.mtimeMs}:${s.size}:${s.ino}`,
      () => "",
    );
    return `${link}|${keys}`;
  };
  let seen: Promise<string> = fingerprint();
  let running: Promise<void> | null = null;
  // A change noticed while a check runs (which may have read the fingerprint before it): one more check after it.
  let again = false;
  const check = (): Promise<void> => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      const now = await fingerprint();
      if (now === (await seen)) return;
      try {
        const { snapshotChanged } = await handler.reload();
        seen = Promise.resolve(now);
        if (snapshotChanged) options.onReload?.(handler.snapshot().id);
      } catch (err) {
        seen = Promise.resolve(now); // do not retry a broken snapshot every tick; the next publish is noticed
        options.onError?.(err);
      }
    })().finally(() => {
      running = null;
      if (again) {
        again = false;
        void check();
      }
    });
    return running;
  };
  const timer = setInterval(() => void check(), options.interval ?? DEFAULT_RELOAD_INTERVAL);
  timer.unref();
  let watcher: FSWatcher | null = null;
  if (options.watchKeys) {
    try {
      const name = basename(keysFile);
      // Writers replace the file by a rename, which is an event on this name (a lock or temporary file is not).
      watcher = watch(dirname(keysFile), { persistent: false }, (_event, changed) => {
        if (changed === null || changed === name) void check();
      });
      watcher.on("error", () => {
        watcher?.close();
        watcher = null;
      });
    } catch {
      watcher = null; // the poll alone
    }
  }
  return {
    check,
    stop: () => {
      clearInterval(timer);
      watcher?.close();
    },
  };
}
