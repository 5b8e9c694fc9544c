// Summarizes a V8 .cpuprofile (from node --cpu-prof): the functions with the most self time.
import { writeFileSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { Session } from "node:inspector/promises";
import { join, relative } from "node:path";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Pseudo-frames that are not work done for requests. */
const IDLE = new Set(["(idle)", "(program)"]);

/** The top `limit` functions by self time in every profile in `dir` and its subdirectories, as text. */
export async function summarizeProfiles(dir: string, repoRoot: string, limit = 20): Promise<string> {
  const files = (await readdir(dir, { recursive: true })).filter((f) => f.endsWith(".cpuprofile")).sort();
  const out: string[] = [];
  for (const file of files) {
    const profile = JSON.parse(await readFile(join(dir, file), "utf8")) as CpuProfile;
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const parent = new Map<number, number>();
    for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    const keyOf = (node: ProfileNode) => {
      const { functionName, url, lineNumber } = node.callFrame;
      const where = url
        ? `${url.startsWith("file://") ? relative(repoRoot, new URL(url).pathname) : url}:${lineNumber + 1}`
        : "";
      return `${functionName || "(anonymous)"} ${where}`.trim();
    };
    const self = new Map<string, number>();
    const inclusive = new Map<string, number>();
    let busy = 0;
    profile.samples.forEach((id, i) => {
      const node = byId.get(id);
      if (!node || IDLE.has(node.callFrame.functionName)) return;
      const dt = profile.timeDeltas[i] ?? 0;
      busy += dt;
      const key = keyOf(node);
      self.set(key, (self.get(key) ?? 0) + dt);
      // Inclusive time of our own code (src/): every distinct src/ function on the sampled stack.
      const seen = new Set<string>();
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
        const n = byId.get(at);
        if (n && n.callFrame.url.includes("/src/")) seen.add(keyOf(n));
      }
      for (const k of seen) inclusive.set(k, (inclusive.get(k) ?? 0) + dt);
    });
    const pct = (us: number) =>
      `${((100 * us) / busy).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(6)} ms`;
    const top = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, limit);
    out.push(`${join(dir, file)}: ${(busy / 1e6).toFixed(1)} s busy (idle excluded); top ${top.length} by self time:`);
    for (const [name, us] of top) out.push(`  ${pct(us)}  ${name}`);
    const ours = [...inclusive.entries()].sort((a, b) => b[1] - a[1]).slice(0, limit);
    out.push(`our code (src/), by inclusive time (callees included):`);
    for (const [name, us] of ours) out.push(`  ${pct(us)}  ${name}`);
  }
  return out.join("\n");
}

/** Starts V8's CPU profiler in this process; the function returned stops it and writes the profile to `file`. */
export async function startCpuProfile(file: string): Promise<() => Promise<void>> {
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.start");
  return async () => {
    const { profile } = await session.post("Profiler.stop");
    writeFileSync(file, JSON.stringify(profile));
  };
}
