// A benchmark's client process (the events benchmarks' bench/*/clients.ts): started pinned to a core with its
// configuration in a JSON file, ready once it prints `READY <pid>`, and its figures in the one `RESULT <json>` line it
// prints when done.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { spawnReady } from "../../scripts/lib/spawn-ready.ts";
import type { ReadyChild } from "../../scripts/lib/spawn-ready.ts";

export interface ClientsProcess<R> {
  child: ReadyChild;
  /** Its RESULT line, parsed; rejects if it exits without one. */
  result: Promise<R>;
}

/** Starts `script` (under the repository at `repoRoot`) as client process `name`, with `config`, on `core`. */
export async function startClientsProcess<R>(
  name: string,
  config: unknown,
  o: { repoRoot: string; script: string; workDir: string; core: number | null; readyTimeoutMs: number },
): Promise<ClientsProcess<R>> {
  const file = join(o.workDir, `${name}.json`);
  await writeFile(file, JSON.stringify(config));
  const child = await spawnReady({
    name,
    script: join(o.repoRoot, o.script),
    scriptArgs: [file],
    cwd: o.repoRoot,
    env: process.env,
    core: o.core,
    ready: { stream: "stdout", pattern: /^READY (\d+)$/m },
    readyTimeoutMs: o.readyTimeoutMs,
  });
  const result = new Promise<R>((resolve, reject) => {
    let out = "";
    child.child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const m = /^RESULT (.*)\n/m.exec(out);
      if (m) resolve(JSON.parse(m[1]!) as R);
    });
    child.child.once("exit", (code, signal) =>
      reject(new Error(`${name} exited before its result (${signal ?? code}): ${child.stderr().slice(-2000)}`)),
    );
  });
  // Stopped early (another part failed), it exits without a result: nobody awaits that rejection then.
  result.catch(() => undefined);
  return { child, result };
}
