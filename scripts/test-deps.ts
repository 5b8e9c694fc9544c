// npm test's first step: checks that this machine has every program the tests start (scripts/lib/test-programs.ts).
// Prints nothing when it has. When some are missing: as root with apt-get, installs their Debian packages
// (`apt-get update`, then `apt-get install`) and checks again; otherwise, or if that fails, exits 1 naming the
// apt-get command to run. SKIP_TEST_DEPS=1 skips the check (a test then fails naming the program it lacks).
import { spawnSync } from "node:child_process";
import { aptInstallArgs, findProgram, installCommand, TEST_PROGRAMS } from "./lib/test-programs.ts";
import type { TestProgram } from "./lib/test-programs.ts";

const missing = () => TEST_PROGRAMS.filter((p) => findProgram(p) === null);
const names = (programs: readonly TestProgram[]) => programs.map((p) => p.name).join(", ");

/** Runs `apt-get args` non-interactively, its output shown; true if it succeeded. */
function aptGet(args: string[]): boolean {
  console.error(`test-deps: apt-get ${args.join(" ")}`);
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  return spawnSync("apt-get", args, { stdio: ["ignore", "inherit", "inherit"], env }).status === 0;
}

function checkTestPrograms(): number {
  let lacking = missing();
  if (lacking.length === 0) return 0;
  const asRoot = process.getuid?.() === 0;
  console.error(`test-deps: the tests start programs this machine lacks:`);
  for (const p of lacking) console.error(`  ${p.name} (Debian ${p.debian}): ${p.why}`);
  if (asRoot && findProgram({ name: "apt-get", debian: "apt", why: "" })) {
    const installed = aptGet(["update"]) && aptGet(aptInstallArgs(lacking));
    lacking = missing();
    if (lacking.length === 0) return 0;
    console.error(`test-deps: ${installed ? "still missing after apt-get" : "apt-get failed"}: ${names(lacking)}`);
  }
  console.error(`test-deps: install them with\n  ${installCommand(lacking, asRoot)}`);
  if (!asRoot) console.error("(npm test runs that itself when run as root)");
  console.error("then run npm test again (SKIP_TEST_DEPS=1 skips this check)");
  return 1;
}

process.exitCode = process.env.SKIP_TEST_DEPS === "1" ? 0 : checkTestPrograms();
