// The digest of the code that decides a derived artefact's bytes: a module and every module it imports, read as text.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/**
 * The relative imports a module names: a quoted path starting with ./ or ../ after `from`, `import` or `import(`.
 * (Not written out here: this module is part of the build's code, and an example in a comment would be followed.)
 */
const RELATIVE_IMPORT = /(?:\bfrom\s*|\bimport\s*\(?\s*)["'](\.{1,2}\/[^"']+)["']/g;

const memo = new Map<string, string | null>();

/**
 * sha256 over the source text of `entries` and of every module they import, directly or not (relative imports,
 * followed to the files themselves): a change to any line of code that can affect the output changes the digest,
 * with no version number for someone to remember to bump. Comments count too; a re-render after a comment change
 * costs one full build, a stale body served after a code change costs correctness. Returns null when a source file
 * cannot be read (the code runs from somewhere its sources are not): the caller must then reuse nothing.
 */
export function codeDigest(entries: readonly URL[]): string | null {
  const key = entries.map((u) => u.href).join("\n");
  if (memo.has(key)) return memo.get(key)!;
  const seen = new Set<string>();
  const queue = entries.map((u) => fileURLToPath(u));
  const texts: [string, string][] = [];
  try {
    while (queue.length > 0) {
      const file = queue.pop()!;
      if (seen.has(file)) continue;
      seen.add(file);
      const text = readFileSync(file, "utf8");
      texts.push([file, text]);
      for (const m of text.matchAll(RELATIVE_IMPORT)) queue.push(fileURLToPath(new URL(m[1]!, `file://${file}`)));
    }
  } catch {
    memo.set(key, null);
    return null;
  }
  const root = fileURLToPath(new URL("../..", import.meta.url));
  const h = createHash("sha256");
  // Sorted by path relative to the repository, so the digest does not depend on where the checkout lives.
  for (const [file, text] of texts.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    h.update(file.slice(root.length)).update("\0").update(text).update("\0");
  const digest = h.digest("hex");
  memo.set(key, digest);
  return digest;
}
