// The database's share of the portal's time, from a V8 CPU profile of the portal process (node --cpu-prof): of the
// samples taken in a window (CLOCK_MONOTONIC microseconds, the clock of the profile's timestamps and of node's
// process.hrtime), those whose stack holds a frame of src/db/ or of the SQLite driver (@libsql, libsql). The driver
// runs each statement synchronously on the portal's main thread (src/db/sqlite.ts), so a sample taken while a
// statement runs, or waits for the disk, has the statement's frames on its stack. Also: the portal's busy time in
// the window, the webhooks code that made the database calls, and the functions with the most self time.
import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface DbShare {
  /** Microseconds of samples in the window (the profile's coverage of it). */
  sampledUs: number;
  /** Of which the portal was busy (not idle), and busy in the database. */
  busyUs: number;
  dbUs: number;
  /** Database time by the nearest src/portal/ function on the stack (who called), largest first. */
  byCaller: [string, number][];
  /** Busy time by function (self time), largest first. */
  bySelf: [string, number][];
}

const IDLE = new Set(["(idle)", "(program)"]);
const isDb = (url: string) => url.includes("/src/db/") || url.includes("/@libsql/") || url.includes("/libsql/");

/** The share of the main thread's profile in `dir` in [fromUs, toUs], monotonic microseconds. */
export async function dbShare(dir: string, repoRoot: string, fromUs: number, toUs: number): Promise<DbShare> {
  // CPU.<date>.<time>.<pid>.<thread>.<n>.cpuprofile: thread 0 is the main thread (the others: worker threads).
  const files = (await readdir(dir)).filter((f) => /\.0\.\d+\.cpuprofile$/.test(f));
  if (files.length !== 1) throw new Error(`${dir}: ${files.length} main-thread CPU profiles, expected one`);
  const profile = JSON.parse(await readFile(join(dir, files[0]!), "utf8")) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const name = (n: ProfileNode) => {
    const { functionName, url, lineNumber } = n.callFrame;
    const where = url.startsWith("file://") ? relative(repoRoot, new URL(url).pathname) : url;
    return `${functionName || "(anonymous)"} ${where}:${lineNumber + 1}`;
  };
  const share: DbShare = { sampledUs: 0, busyUs: 0, dbUs: 0, byCaller: [], bySelf: [] };
  const callers = new Map<string, number>();
  const self = new Map<string, number>();
  let t = profile.startTime;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    t += dt;
    if (t < fromUs || t > toUs) return;
    share.sampledUs += dt;
    const node = byId.get(id);
    if (!node || IDLE.has(node.callFrame.functionName)) return;
    share.busyUs += dt;
    self.set(name(node), (self.get(name(node)) ?? 0) + dt);
    let db = false;
    let caller = "";
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const n = byId.get(at)!;
      if (isDb(n.callFrame.url)) db = true;
      else if (db && !caller && n.callFrame.url.includes("/src/portal/")) caller = name(n);
    }
    if (!db) return;
    share.dbUs += dt;
    const key = caller || "(no src/portal/ frame: a continuation of the driver's own)";
    callers.set(key, (callers.get(key) ?? 0) + dt);
  });
  share.byCaller = [...callers].sort((a, b) => b[1] - a[1]);
  share.bySelf = [...self].sort((a, b) => b[1] - a[1]);
  return share;
}
