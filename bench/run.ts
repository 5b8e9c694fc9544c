// `npm run bench -- <name> [args]`: runs bench/<name>.ts in its own Node process (with tsx), passing the arguments through.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The benchmarks this dispatcher knows. */
const BENCHMARKS = [
  "serve",
  "search",
  "search-http",
  "build",
  "limits",
  "workers",
  "events",
  "events-resume",
  "usage",
  "edge",
  "portal-mail",
  "portal-signin",
  "webhooks",
] as const;

const here = dirname(fileURLToPath(import.meta.url));
const [name, ...args] = process.argv.slice(2);

if (!name || !(BENCHMARKS as readonly string[]).includes(name)) {
  console.error(`usage: npm run bench -- <${BENCHMARKS.join("|")}> [args...]`);
  process.exit(2);
}
const file = join(here, `${name}.ts`);
if (!existsSync(file)) {
  console.error(`bench: ${file} does not exist (yet)`);
  process.exit(2);
}

const child = spawn(process.execPath, ["--import", "tsx", file, ...args], { stdio: "inherit", cwd: join(here, "..") });
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
