// Child of crash.test.ts: builds, and stops itself (SIGSTOP) at a given point of the build for the parent to SIGKILL.
// Usage: node --import tsx test/generate/crash-child.ts <catalogDir> <dataDir> <phase> <fraction of the phase done>
import { buildSnapshot } from "../../src/generate/index.ts";

const [catalogDir = "", dataDir = "", phase = "", fraction = "0"] = process.argv.slice(2);
let stopped = false;
await buildSnapshot({
  catalogDir,
  dataDir,
  baseUrl: "http://api.test",
  onProgress: (p, done, total) => {
    if (stopped || p !== phase || done < Number(fraction) * total) return;
    stopped = true;
    process.stdout.write(`stopped at ${p} ${done}/${total}\n`); // a pipe: written before the next line runs
    process.kill(process.pid, "SIGSTOP");
  },
});
process.stdout.write("finished\n");
