// Another commit of this repository to benchmark beside the working tree: checked out in a git worktree outside it
// (never a checkout in the working tree, where others edit), with its dependencies, and its own snapshot and key built
// by its own code from the same catalog.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { sha256Hex } from "../../src/snapshot/format.ts";

const run = promisify(execFile);

/** A commit checked out for the benchmark. */
export interface Revision {
  /** As given on the command line (a SHA, a branch, HEAD~3 ...), and its full and short SHA. */
  name: string;
  sha: string;
  short: string;
  /** The worktree's directory. */
  root: string;
  /** Removes the worktree (not the shared dependencies). */
  remove(): Promise<void>;
}

const git = async (cwd: string, ...args: string[]) =>
  (await run("git", args, { cwd, maxBuffer: 1 << 24 })).stdout.trim();

/** `git merge-base HEAD main`: the default base of the two-commit comparison. */
export const mergeBase = (repoRoot: string) => git(repoRoot, "merge-base", "HEAD", "main");

/**
 * Checks out `rev` in `<tmpdir>/serve-base-<sha>` (reused if it is there from a run with --keep-worktrees), with its
 * dependencies: the working tree's node_modules when the package-lock.json is the same, else `npm ci` once per lock
 * into `<tmpdir>/serve-base-modules-<lock digest>`, linked from each worktree with that lock.
 */
export async function checkoutRevision(repoRoot: string, rev: string, log: (m: string) => void): Promise<Revision> {
  const sha = await git(repoRoot, "rev-parse", "--verify", `${rev}^{commit}`);
  const short = sha.slice(0, 7);
  const root = join(tmpdir(), `serve-base-${short}`);
  if (!existsSync(join(root, ".git"))) {
    log(`git worktree add --detach ${root} ${short}`);
    await git(repoRoot, "worktree", "add", "--detach", "--force", root, sha);
  }
  if (!existsSync(join(root, "node_modules"))) {
    const lock = await readFile(join(root, "package-lock.json"), "utf8");
    const ours = await readFile(join(repoRoot, "package-lock.json"), "utf8");
    let modules = join(repoRoot, "node_modules");
    if (lock !== ours) {
      const dir = join(tmpdir(), `serve-base-modules-${sha256Hex(lock).slice(0, 12)}`);
      modules = join(dir, "node_modules");
      if (!existsSync(join(modules, ".package-lock.json"))) {
        log(`${short}: its package-lock.json differs from the working tree's: npm ci in ${dir} ...`);
        await mkdir(dir, { recursive: true });
        await writeFile(join(dir, "package.json"), await readFile(join(root, "package.json")));
        await writeFile(join(dir, "package-lock.json"), lock);
        await run("npm", ["ci", "--no-audit", "--no-fund"], { cwd: dir, maxBuffer: 1 << 24 });
      }
    }
    await symlink(modules, join(root, "node_modules"), "dir");
  }
  return {
    name: rev,
    sha,
    short,
    root,
    remove: async () => {
      await git(repoRoot, "worktree", "remove", "--force", root);
    },
  };
}

/** The script a revision builds its snapshot and key with: its own build and keys code, whatever they became since. */
const PREPARE = `// written by bench/lib/worktree.ts
import { existsSync } from "node:fs";
// src/build/ became src/generate/: a revision from before the move has the old folder.
const generate = existsSync(new URL("./src/generate/index.ts", import.meta.url)) ? "./src/generate/index.ts" : "./src/build/index.ts";
const { buildSnapshot } = await import(generate);
import { createKey } from "./src/keys/keys-file.ts";
const [catalogDir, dataDir, keysFile, baseUrl] = process.argv.slice(2);
await buildSnapshot({ catalogDir, dataDir, baseUrl, source: "bench", force: true });
const key = await createKey(keysFile, "bench", new Date(), { rate: 1e9, burst: 1e9 });
process.stdout.write("KEY " + key + "\\n");
`;

/**
 * Builds `catalogDir` into `<dir>/data` with the revision's own code and makes it a key that its limit never bites
 * (in `<dir>/keys.json`); returns them.
 */
export async function prepareRevision(r: Revision, catalogDir: string, dir: string, baseUrl: string) {
  const [dataDir, keysFile, script] = [join(dir, "data"), join(dir, "keys.json"), join(r.root, ".bench-prepare.ts")];
  await mkdir(dir, { recursive: true });
  await writeFile(script, PREPARE);
  const { stdout } = await run(process.execPath, ["--import", "tsx", script, catalogDir, dataDir, keysFile, baseUrl], {
    cwd: r.root,
    maxBuffer: 1 << 24,
    env: { ...process.env, NODE_ENV: "production" },
  });
  const key = /^KEY (\S+)$/m.exec(stdout)?.[1];
  if (!key) throw new Error(`${r.short}: building the snapshot printed no key: ${stdout.slice(-500)}`);
  return { dataDir, keysFile, key };
}
