// The shipped fronts (deploy/nginx, deploy/varnish) as the tests and the edge benchmark run them: the real nginx and
// varnishd, on a given loopback port in front of a server, with everything they write in a given directory.
import { spawn, spawnSync } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const NGINX_CONF = fileURLToPath(new URL("../../deploy/nginx/flash-sale-api.conf", import.meta.url));
const VARNISH_VCL = fileURLToPath(new URL("../../deploy/varnish/default.vcl", import.meta.url));

/** A running front. */
export interface Front {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Where a front runs and what it runs as. */
interface FrontOptions {
  /** The program (its path, as requireProgram or the benchmark found it). */
  program: string;
  /** Its working directory (made if missing): configuration, cache, logs, instance. */
  dir: string;
  /** The loopback port it listens on. */
  port: number;
  /** The server's port on 127.0.0.1. */
  upstreamPort: number;
  /** Run under `taskset -c <cpus>` (the benchmark). Default: not pinned. */
  cpus?: string;
}

/** Replaces `from` by `to` in `text`, failing if `from` is not there (the shipped file changed under its caller). */
function edit(text: string, from: string, to: string): string {
  if (!text.includes(from)) throw new Error(`the shipped configuration lacks ${JSON.stringify(from)}`);
  return text.replaceAll(from, to);
}

function launch(o: FrontOptions, args: string[]): ChildProcess {
  return o.cpus
    ? spawn("taskset", ["-c", o.cpus, o.program, ...args], { stdio: ["ignore", "pipe", "pipe"] })
    : spawn(o.program, args, { stdio: ["ignore", "pipe", "pipe"] });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGKILL");
  await once(child, "exit");
}

/**
 * The nginx site file's paths: the access log (the configuration's own format), the site's error log, and nginx's
 * own error log (at `info`: what it writes before it knows the request's server).
 */
export interface NginxLogs {
  access: string;
  error: string;
  global: string;
}

/** What nginx's main file sets beside its paths. */
interface NginxMainOptions {
  /** Worker processes. Default 1. */
  workers?: number;
  /** worker_connections. Default 1024. */
  connections?: number;
  /**
   * The open files the site's `open_file_cache max` may hold: `worker_rlimit_nofile` is set to that, plus a client and
   * an upstream socket per connection and 64 more (logs, listening sockets, files being sent while the cache closes
   * them). nginx applies it in a worker process only (a single process keeps the limit it was started with), so with
   * it there is a master process even for one worker. Default none: the limit nginx was started with.
   */
  openFiles?: number;
}

/** The `worker_rlimit_nofile` nginxMain sets for `openFiles` files held open and `connections` connections. */
export const nginxOpenFilesLimit = (openFiles: number, connections = 1024) => openFiles + 2 * connections + 64;

/**
 * nginx's main file for one site file: in the foreground, as root, its temp paths and logs under `dir`; `sendfile on`
 * as Debian's nginx.conf has it, and `pcre_jit on` as deploy/nginx's header asks.
 */
export function nginxMain(dir: string, site: string, global: string, o: NginxMainOptions = {}): string {
  const { workers = 1, connections = 1024 } = o;
  const master = workers > 1 || o.openFiles !== undefined;
  const limit =
    o.openFiles === undefined ? "" : `worker_rlimit_nofile ${nginxOpenFilesLimit(o.openFiles, connections)};\n`;
  return (
    `daemon off;\nmaster_process ${master ? "on" : "off"};\nworker_processes ${workers};\n${limit}user root;\npcre_jit on;\n` +
    `pid ${join(dir, "nginx.pid")};\nerror_log ${global} info;\nevents { worker_connections ${connections}; }\n` +
    `http {\n  access_log off;\n  sendfile on;\n  client_body_temp_path ${join(dir, "body")};\n  proxy_temp_path ${join(dir, "proxy")};\n` +
    `  include ${site};\n}\n`
  );
}

/**
 * Starts nginx with deploy/nginx/flash-sale-api.conf: its listen address, upstream, cache directories and log files
 * moved under `dir` (started again on the same `dir`, it finds its cache there); `site` changes the text after that
 * (a control case). Resolves once it answers /healthz. With `openFiles`, a master process, one worker (which does the
 * work: nginxWorkers) and the cache's manager and loader, stopped together.
 */
export async function startNginxFront(
  o: FrontOptions & {
    site?: (site: string) => string;
    /** ngx_http_cache_purge_module.so (Debian's libnginx-mod-http-cache-purge): the site's purge location needs it. */
    purgeModule: string;
    /** The open files its worker may hold beside its connections (nginxMain's `openFiles`). Default: as started. */
    openFiles?: number;
  },
): Promise<Front & { logs: NginxLogs; stderr: () => string }> {
  await mkdir(join(o.dir, "logs"), { recursive: true });
  const logs = {
    access: join(o.dir, "logs", "access.log"),
    error: join(o.dir, "logs", "error.log"),
    global: join(o.dir, "logs", "global.log"),
  };
  let site = await readFile(NGINX_CONF, "utf8");
  site = edit(site, "server 127.0.0.1:8080;", `server 127.0.0.1:${o.upstreamPort};`);
  site = edit(site, "listen 80;", `listen 127.0.0.1:${o.port};`);
  site = edit(site, "/var/cache/nginx/flash-sale-api", join(o.dir, "cache"));
  site = edit(site, "access_log /var/log/nginx/flash-sale-api.access.log ", `access_log ${logs.access} `);
  site = edit(site, "error_log /var/log/nginx/flash-sale-api.error.log ", `error_log ${logs.error} `);
  site = o.site ? o.site(site) : site;
  await writeFile(join(o.dir, "site.conf"), site);
  const main = nginxMain(o.dir, join(o.dir, "site.conf"), logs.global, o.openFiles ? { openFiles: o.openFiles } : {});
  await writeFile(join(o.dir, "nginx.conf"), `load_module ${o.purgeModule};\n${main}`);
  const child = launch(o, ["-p", o.dir, "-c", join(o.dir, "nginx.conf")]);
  let output = "";
  child.stderr!.on("data", (c: Buffer) => (output += c.toString()));
  const url = `http://127.0.0.1:${o.port}`;
  await waitForAnswer(`${url}/healthz`, child, () => output);
  // What nginx says while it reads its configuration (warnings included) goes to stderr, not to its error logs.
  // A master's children outlive it when it is killed: they are killed after it (before, it would start new ones).
  const stop = async () => {
    const children = o.openFiles ? childrenOf(child.pid!) : [];
    await stopChild(child);
    for (const pid of children) await killAndWait(pid);
  };
  return { url, child, logs, stderr: () => output, stop };
}

/** The pids of `pid`'s children (none once it has exited). */
export function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** An nginx master's worker processes (beside them it runs a cache manager and, for a minute, a cache loader). */
export function nginxWorkers(master: number): number[] {
  return childrenOf(master).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").startsWith("nginx: worker process");
    } catch {
      return false;
    }
  });
}

/** Whether `pid` has ended: gone from /proc, or a zombie (dead, its parent yet to reap it). */
export function ended(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return /^[ZX]/.test(stat.slice(stat.lastIndexOf(")") + 2));
  } catch {
    return true;
  }
}

/** Kills `pid` (not a child of ours: no exit event) and resolves once it has ended, failing after 5 s. */
async function killAndWait(pid: number): Promise<void> {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    return; // gone already
  }
  for (let i = 0; !ended(pid); i++) {
    if (i > 500) throw new Error(`${pid} did not end on SIGKILL`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Polls `url` until it answers at all (nginx prints nothing when it starts); fails if `child` exits first. */
export async function waitForAnswer(url: string, child: ChildProcess, output: () => string): Promise<void> {
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`exited (${child.exitCode}): ${output()}`);
    const ok = await fetch(url).then(
      (r) => r.arrayBuffer().then(() => true),
      () => false,
    );
    if (ok) return;
    if (i > 400) throw new Error(`${url} did not answer: ${output()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * Starts varnishd with deploy/varnish/default.vcl (or `vcl`, a path, with the same backend) in the foreground, its
 * backend's port set, started as the VCL's header says (`-p http_gzip_support=off`), its instance `<dir>/instance`
 * (varnishadm and varnishncsa reach it by that name). Resolves once it answers.
 */
export async function startVarnishFront(
  o: FrontOptions & { vcl?: string; storage?: string; pkill: string },
): Promise<Front & { instance: string }> {
  await mkdir(o.dir, { recursive: true });
  await chmod(o.dir, 0o755); // varnishd reads the VCL as its own user
  const vcl = edit(await readFile(o.vcl ?? VARNISH_VCL, "utf8"), '.port = "8080";', `.port = "${o.upstreamPort}";`);
  await writeFile(join(o.dir, "front.vcl"), vcl);
  const instance = join(o.dir, "instance");
  const child = launch(o, [
    ...["-F", "-n", instance, "-a", `127.0.0.1:${o.port}`, "-T", "127.0.0.1:0", "-f", join(o.dir, "front.vcl")],
    ...["-s", o.storage ?? "malloc,64m", "-p", "http_gzip_support=off"],
  ]);
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
  // The child process listens on the socket once it has started: until then a connection is refused.
  const url = `http://127.0.0.1:${o.port}`;
  await waitForAnswer(`${url}/healthz`, child, () => output);
  return {
    url,
    child,
    instance,
    stop: async () => {
      await stopChild(child);
      // varnishd's cache process outlives its manager when that is killed.
      spawnSync(o.pkill, ["-9", "-f", instance]);
    },
  };
}
