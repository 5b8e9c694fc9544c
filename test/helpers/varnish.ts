// A real varnishd (Debian's `varnish`) for the tests: a VCL from deploy/ with its backend port replaced, on a free
// loopback port, in its own instance directory (varnishncsa and varnishadm reach it by that name), stopped afterwards.
import { spawn, spawnSync } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { chmod, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { requireProgram } from "../../scripts/lib/test-programs.ts";
import { freePort, tempDir } from "./fixture.ts";

export interface Varnish {
  url: string;
  /** The instance name (a directory) for `varnishncsa -n` and `varnishadm -n`. */
  instance: string;
  stop(): Promise<void>;
}

/** Starts varnishd with the VCL at `vclPath`, its `.port = "8080"` backend pointed at `backendPort`. */
export async function startVarnish(vclPath: string, backendPort: number): Promise<Varnish> {
  const varnishd = requireProgram("varnishd");
  const pkill = requireProgram("pkill");
  const workDir = await tempDir("fsa-varnish-");
  await chmod(workDir, 0o755); // varnishd reads the VCL as its own user
  const vcl = (await readFile(vclPath, "utf8")).replace(/\.port = "8080";/, `.port = "${backendPort}";`);
  if (!vcl.includes(`.port = "${backendPort}"`)) throw new Error(`${vclPath} has no .port = "8080" to replace`);
  await writeFile(join(workDir, "test.vcl"), vcl);
  const port = await freePort();
  const instance = join(workDir, "instance");
  const child: ChildProcess = spawn(
    varnishd,
    ["-F", "-n", instance, "-a", `127.0.0.1:${port}`, "-T", "127.0.0.1:0", "-f", join(workDir, "test.vcl")].concat([
      "-s",
      "malloc,32m",
      "-p",
      "http_gzip_support=off",
    ]),
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  await new Promise<void>((resolve, reject) => {
    const take = (c: Buffer) => {
      output += c.toString();
      if (output.includes("Child launched OK")) resolve();
    };
    child.stdout!.on("data", take);
    child.stderr!.on("data", take);
    child.once("exit", (code) => reject(new Error(`varnishd exited (${code}): ${output}`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    instance,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGKILL");
        await once(child, "exit");
      }
      // varnishd's worker process outlives its manager when that is killed.
      spawnSync(pkill, ["-9", "-f", instance]);
    },
  };
}
