// What a process costs, from Linux /proc: resident memory, CPU time (user + system, all threads) and open files; and
// the machine's CPU time stolen by its hypervisor.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

let ticksPerSecond: number | null = null;

/** Clock ticks a second (`getconf CLK_TCK`, asked once; 100 where it cannot be asked). */
function clockTicks(): number {
  if (ticksPerSecond === null) {
    try {
      ticksPerSecond = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** CPU seconds used by `pid` so far, or null where /proc is not available. */
export function cpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may contain spaces) start at field 3; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / clockTicks();
  } catch {
    return null;
  }
}

/**
 * The machine's CPU time so far, all cores, in clock ticks: the total and what the hypervisor gave other guests while
 * this one had work (steal, /proc/stat's eighth field), or null where /proc is not available.
 */
export function cpuSteal(): { total: number; steal: number } | null {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n", 1)[0]!;
    const ticks = line.trim().split(/\s+/).slice(1, 9).map(Number);
    return { total: ticks.reduce((a, b) => a + b, 0), steal: ticks[7] ?? 0 };
  } catch {
    return null;
  }
}

/** Resident memory of a process, in MB, or NaN when it cannot be read. */
export function rssMb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** The files (descriptors) a process has open, and its limit (the soft one), or NaN where they cannot be read. */
export function openFiles(pid: number): { open: number; limit: number } {
  try {
    const limit = /^Max open files\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/limits`, "utf8"));
    return { open: readdirSync(`/proc/${pid}/fd`).length, limit: limit ? Number(limit[1]) : NaN };
  } catch {
    return { open: NaN, limit: NaN };
  }
}
