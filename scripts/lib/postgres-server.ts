// A real PostgreSQL for the tests and benchmarks: Debian's initdb and postgres in a directory given, on a loopback
// port given, stopped afterwards. As root they run as the `postgres` user (PostgreSQL refuses to run as root).
import { spawn, spawnSync } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { chown, mkdir } from "node:fs/promises";
import { once } from "node:events";
import { join } from "node:path";
import { requireProgram } from "./test-programs.ts";

export interface PostgresServer {
  /** postgres://portal@127.0.0.1:<port>/postgres (trust authentication, loopback only). */
  url: string;
  stop(): Promise<void>;
  /** Starts it again after `stop`, on the same data and port (an outage of the database, ended). */
  restart(): Promise<void>;
}

/** The user PostgreSQL runs as: ourselves, or `postgres` (made by Debian's package) when we are root. */
function asUser(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const id = (flag: string) => Number(spawnSync("id", [flag, "postgres"], { encoding: "utf8" }).stdout.trim());
  return { uid: id("-u"), gid: id("-g") };
}

/** Makes a cluster in `dir` (made if need be, empty) and starts postgres on 127.0.0.1:`port`; resolves once it accepts connections. */
export async function startPostgresIn(dir: string, port: number): Promise<PostgresServer> {
  const initdb = requireProgram("initdb");
  const postgres = requireProgram("postgres");
  await mkdir(dir, { recursive: true });
  const data = join(dir, "data");
  const user = asUser();
  if (user) await chown(dir, user.uid, user.gid);
  // Started as that user directly (not through runuser), so that our signals reach postgres itself.
  const as = user ? { uid: user.uid, gid: user.gid, cwd: dir } : { cwd: dir };
  const initArgs = ["-D", data, "-U", "portal", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"];
  const made = spawnSync(initdb, initArgs, { encoding: "utf8", ...as });
  if (made.status !== 0) throw new Error(`initdb failed (${made.status}): ${made.stderr}`);
  const args = ["-D", data, "-p", String(port), "-h", "127.0.0.1", "-k", dir, "-c", "fsync=off"];
  const start = async (): Promise<ChildProcess> => {
    const child: ChildProcess = spawn(postgres, args, { stdio: ["ignore", "pipe", "pipe"], ...as });
    let output = "";
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`postgres did not start within 30 s: ${output}`)), 30_000);
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (/ready to accept connections/.test(output)) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout!.on("data", onData);
      child.stderr!.on("data", onData);
      child.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`postgres exited (${code}): ${output}`));
      });
    });
    return child;
  };
  let child = await start();
  return {
    url: `postgres://portal@127.0.0.1:${port}/postgres`,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGINT"); // fast shutdown
      await once(child, "exit");
    },
    restart: async () => {
      child = await start();
    },
  };
}
