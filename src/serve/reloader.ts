// Hot reload: notices a newly published snapshot or a changed keys file and swaps the handler to them.
import { readlink, stat } from "node:fs/promises";
import { join } from "node:path";
import { CURRENT_LINK } from "../snapshot/format.ts";
import type { Handler } from "./handler.ts";

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
 */
export function createReloader(
  handler: Handler,
  dataDir: string,
  keysFile: string,
  options: { interval?: number; onReload?: (snapshotId: string) => void; onError?: (err: unknown) => void } = {},
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
  const check = async () => {
    if (running) return running;
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
    });
    return running;
  };
  const timer = setInterval(() => void check(), options.interval ?? DEFAULT_RELOAD_INTERVAL);
  timer.unref();
  return { check, stop: () => clearInterval(timer) };
}
