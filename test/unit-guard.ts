// The unit project's guard (vitest.config.ts): a unit test may not listen on a port or start a child process. Either
// throws here, naming what was tried, so that a file test/test-kinds.ts took for a unit test but which starts something
// fails at once and is seen (name the starter in test-kinds.ts, or stop starting it).
import { createRequire, syncBuiltinESMExports } from "node:module";
import net from "node:net";

const require = createRequire(import.meta.url);
const childProcess = require("node:child_process") as Record<string, unknown>;

const refuse = (what: string) => () => {
  throw new Error(`a unit test may not ${what}: name its starter in test/test-kinds.ts so it runs as a system test`);
};

net.Server.prototype.listen = refuse("listen on a port") as typeof net.Server.prototype.listen;
for (const name of ["spawn", "spawnSync", "exec", "execSync", "execFile", "execFileSync", "fork"])
  childProcess[name] = refuse(`start a child process (${name})`);
syncBuiltinESMExports();
