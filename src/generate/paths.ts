// Paths under the data directory (packs, named by their digest) are joined with safeJoin, which refuses any outside it.
import { isAbsolute, relative, resolve } from "node:path";

class UnsafePathError extends Error {
  constructor(root: string, path: string) {
    super(`refusing to write outside ${root}: ${path}`);
    this.name = "UnsafePathError";
  }
}

/** Joins `path` under `root` and throws unless the result stays strictly inside `root`. */
export function safeJoin(root: string, path: string): string {
  const base = resolve(root);
  const target = resolve(base, path);
  const rel = relative(base, target);
  if (rel === "" || rel.startsWith("..") || isAbsolute(rel) || path.includes("\0"))
    throw new UnsafePathError(base, path);
  return target;
}
