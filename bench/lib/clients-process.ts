// A benchmark's client process (the events benchmarks' bench/*/clients.ts): started pinned to a core with its
// configuration in a JSON file, ready once it prints `READY <pid>`, and its figures in the one `RESULT <json>` line it
// prints when done. And the keys their event streams are spread over.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { spawnReady } from "../../scripts/lib/spawn-ready.ts";
import { createKey } from "../../src/keys/keys-file.ts";
import { EVENT_DEFAULTS } from "../../src/serve/events/options.ts";
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

/** Event streams a key may hold: the server's default cap, which the benchmarks spread their streams over keys by. */
export const STREAMS_PER_KEY = EVENT_DEFAULTS.maxStreamsPerKey;

/** Keys for `streams` event streams, STREAMS_PER_KEY each, none rate-limited, named `<prefix>-<i>`, in `keysFile`. */
export async function streamKeys(keysFile: string, streams: number, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  for (let i = 0; i < Math.ceil(streams / STREAMS_PER_KEY); i++)
    keys.push(await createKey(keysFile, `${prefix}-${i}`, new Date(), { rate: 1e9, burst: 1e9 }));
  return keys;
}
