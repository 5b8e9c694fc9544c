// For scripts/request-files.ts: the server as `npm run serve` runs it (src/cli/serve.ts, configured by the
// environment), with V8's precise coverage (call counts) started in its own process before any of its modules loads.
// Over the IPC channel, "take" answers with the count of every function of src/ called since the last take (V8 resets
// the counts at each take), so the parent can measure a window of requests.
import { Session } from "node:inspector";
import { fileURLToPath } from "node:url";

/** Functions of one file of src/ called since the last take: name (or `(anonymous)`), offset in the file, calls. */
export interface FileCounts {
  file: string;
  functions: Array<{ name: string; offset: number; count: number }>;
}

interface ScriptCoverage {
  url: string;
  functions: Array<{ functionName: string; ranges: Array<{ startOffset: number; count: number }> }>;
}

const SRC = fileURLToPath(new URL("../../src/", import.meta.url));

const session = new Session();
session.connect();
const post = <T>(method: string, params?: object) =>
  new Promise<T>((resolve, reject) =>
    session.post(method, params, (err, result) => (err ? reject(err) : resolve(result as T))),
  );

/** The calls since the last take, in files under src/ only (node's own code, node_modules and scripts/ left out). */
async function take(): Promise<FileCounts[]> {
  const { result } = await post<{ result: ScriptCoverage[] }>("Profiler.takePreciseCoverage");
  const files: FileCounts[] = [];
  for (const script of result) {
    if (!script.url.startsWith("file:")) continue;
    const path = fileURLToPath(script.url);
    if (!path.startsWith(SRC)) continue;
    const functions = script.functions
      .map((f) => ({
        name: f.functionName || "(anonymous)",
        offset: f.ranges[0]!.startOffset,
        count: f.ranges[0]!.count,
      }))
      .filter((f) => f.count > 0 && f.offset > 0); // offset 0: the module's top level, run once at load
    if (functions.length) files.push({ file: "src/" + path.slice(SRC.length), functions });
  }
  return files;
}

await post("Profiler.enable");
// Function granularity (detailed: false): one count per function, which is all the table needs.
await post("Profiler.startPreciseCoverage", { callCount: true, detailed: false });
process.on("message", (m: unknown) => {
  if (m === "take") void take().then((files) => process.send!({ files }));
});
// The channel must not keep a stopped server alive: SIGTERM's graceful stop still ends the process.
process.channel?.unref();
await import("../../src/cli/serve.ts");
