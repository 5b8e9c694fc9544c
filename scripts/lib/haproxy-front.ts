// The shipped HAProxy front (deploy/haproxy) as the tests and the edge benchmark run it: the real haproxy on a given
// loopback port in front of a server, its map, runtime socket and log in a given directory.
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { createWriteStream } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { waitForAnswer } from "./fronts.ts";

const HAPROXY_CFG = fileURLToPath(new URL("../../deploy/haproxy/haproxy.cfg", import.meta.url));

/** A running HAProxy: its address, runtime socket, map and log files. */
export interface HaproxyFront {
  url: string;
  child: ChildProcess;
  /** The runtime API's unix socket (createHaproxyFront's address). */
  socket: string;
  map: string;
  /** Its log (the configuration's format, one line a request). */
  log: string;
  stop(): Promise<void>;
}

function edit(text: string, from: string, to: string): string {
  if (!text.includes(from)) throw new Error(`the shipped configuration lacks ${JSON.stringify(from)}`);
  return text.replaceAll(from, to);
}

/**
 * Starts haproxy with deploy/haproxy/haproxy.cfg in the foreground: its listen address, servers, map, runtime socket
 * moved under `dir`, its log written to `<dir>/haproxy.log` (through stdout), the map's first text `map`. Resolves
 * once it answers /healthz.
 */
export async function startHaproxyFront(o: {
  program: string;
  dir: string;
  port: number;
  upstreamPort: number;
  map: string;
  /** Run under `taskset -c <cpus>` (the benchmark). */
  cpus?: string;
  /** `nbthread` (default: HAProxy's, one a core it may use). */
  threads?: number;
}): Promise<HaproxyFront> {
  await mkdir(o.dir, { recursive: true });
  const map = join(o.dir, "keys.map");
  const socket = join(o.dir, "admin.sock");
  const log = join(o.dir, "haproxy.log");
  await writeFile(map, o.map);
  let cfg = await readFile(HAPROXY_CFG, "utf8");
  cfg = edit(cfg, "/etc/haproxy/flash-sale-api/keys.map", map);
  cfg = edit(cfg, "stats socket /run/haproxy/flash-sale-api.sock", `stats socket ${socket}`);
  cfg = edit(cfg, "log /dev/log local0", "log stdout format raw local0");
  cfg = edit(cfg, "bind :80", `bind 127.0.0.1:${o.port}`);
  cfg = edit(cfg, "127.0.0.1:8080", `127.0.0.1:${o.upstreamPort}`);
  if (o.threads) cfg = edit(cfg, "\nglobal\n", `\nglobal\n    nbthread ${o.threads}\n`);
  await writeFile(join(o.dir, "haproxy.cfg"), cfg);
  const args = ["-db", "-f", join(o.dir, "haproxy.cfg")];
  const child = o.cpus
    ? spawn("taskset", ["-c", o.cpus, o.program, ...args], { stdio: ["ignore", "pipe", "pipe"] })
    : spawn(o.program, args, { stdio: ["ignore", "pipe", "pipe"] });
  child.stdout.pipe(createWriteStream(log));
  let output = "";
  child.stderr.on("data", (c: Buffer) => (output += c.toString()));
  const url = `http://127.0.0.1:${o.port}`;
  await waitForAnswer(`${url}/healthz`, child, () => output);
  return {
    url,
    child,
    socket,
    map,
    log,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGKILL");
      await once(child, "exit");
    },
  };
}
