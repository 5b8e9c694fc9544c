// Checks the serve benchmark's tools before it starts: wrk and taskset on PATH, bench/node_modules installed.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";

export interface Preflight {
  /** Cores to pin the server and wrk to, or null when the machine has a single core (no pinning). */
  cores: { server: number; wrk: number } | null;
  notes: string[];
}

function onPath(cmd: string): boolean {
  return spawnSync("sh", ["-c", `command -v ${cmd}`], { stdio: "ignore" }).status === 0;
}

/** Throws with an instruction when something is missing; installs bench/node_modules itself when it can. */
export function preflight(repoRoot: string): Preflight {
  const notes: string[] = [];
  if (!onPath("wrk")) {
    throw new Error("wrk is not installed. On Debian/Ubuntu: sudo apt-get update && sudo apt-get install -y wrk");
  }
  const benchDir = join(repoRoot, "bench");
  if (!existsSync(join(benchDir, "node_modules", "serve-handler", "package.json"))) {
    process.stderr.write("bench: bench/node_modules is missing serve-handler; running npm ci --prefix bench ...\n");
    try {
      execFileSync("npm", ["ci", "--prefix", benchDir], { stdio: ["ignore", "inherit", "inherit"], cwd: repoRoot });
    } catch {
      throw new Error(
        "could not install the benchmark's dependencies: run `npm ci --prefix bench` (or `npm install --prefix bench`) and try again",
      );
    }
    notes.push("installed bench/node_modules (npm ci --prefix bench)");
  }
  const cores = availableParallelism();
  if (cores < 2) {
    notes.push(`only ${cores} core: server and wrk are NOT pinned apart, figures are not comparable to the targets`);
    return { cores: null, notes };
  }
  if (!onPath("taskset")) {
    throw new Error(
      "taskset is not installed (it pins the server and wrk to separate cores). On Debian/Ubuntu: apt-get install -y util-linux",
    );
  }
  return { cores: { server: 0, wrk: 1 }, notes };
}

/** `uptime` output (load averages), to judge how noisy the run's figures may be. */
export function loadNote(): string {
  try {
    return execFileSync("uptime", { encoding: "utf8" }).trim();
  } catch {
    return "(uptime unavailable)";
  }
}
