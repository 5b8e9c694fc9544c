// The machine's stolen CPU time as the benchmarks read it from /proc/stat: counted in the machine's total, which grows
// while this process works.
import { describe, expect, it } from "vitest";
import { cpuSeconds, cpuSteal } from "../../scripts/lib/proc.ts";

describe("cpuSteal", () => {
  it("reads the machine's total and stolen ticks, the total growing with work done", () => {
    const before = cpuSteal();
    expect(before).not.toBeNull();
    expect(before!.steal).toBeGreaterThanOrEqual(0);
    expect(before!.steal).toBeLessThan(before!.total);
    // Work until this process has used 50 ms more CPU: at least 5 ticks on every clock Linux has (100-1000 Hz).
    const start = cpuSeconds(process.pid)!;
    while (cpuSeconds(process.pid)! - start < 0.05);
    const after = cpuSteal()!;
    expect(after.total - before!.total).toBeGreaterThanOrEqual(5);
    expect(after.steal).toBeGreaterThanOrEqual(before!.steal);
  });
});
