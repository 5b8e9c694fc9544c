// Usage answered by a cache in front of the API. Varnish's request log (varnishncsa, reading its shared memory log)
// and the shipped nginx's access log give every request the front answered itself, from its cache (a hit) or on its
// own (the 429 of a key over its rate), each counted against its key as the servers count the requests that reach
// them. Misses and passes reach a server, which counts them, so nothing is counted twice. The shipped configurations
// log the key's name (Varnish: `std.log("key:<name>")`; nginx: `key=<name>`), once its check has passed, and never
// the key: nothing here sees a key. Each request is counted under its path's route class, as the servers count theirs.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { matchEndpoint, ROUTE_INDEX } from "../api/routing.ts";
import type { RouteIndex } from "../api/routing.ts";
import type { Meter } from "./meter.ts";

/**
 * A logged path's route class, as the server's admission finds it (src/serve/admission/admission.ts): its endpoint's,
 * else `other`. Varnish logs the path as the client sent it (percent-encoded), nginx's $uri is decoded already.
 */
function routeOfPath(path: string): RouteIndex {
  let decoded = path;
  if (path.includes("%"))
    try {
      decoded = decodeURIComponent(path);
    } catch {
      return ROUTE_INDEX.other;
    }
  return matchEndpoint(decoded)?.route ?? ROUTE_INDEX.other;
}

/**
 * varnishncsa's line per client request: how Varnish handled it, the status and body bytes it sent, the key's name,
 * the path (without the query, where the key may be).
 */
const VARNISHNCSA_FORMAT = "%{Varnish:handling}x %s %b %{VCL_Log:key}x %U";
/** Only the requests whose key the VCL named (a refused key is named nowhere). */
const VARNISHNCSA_QUERY = 'VCL_Log ~ "^key:"';
/** Answers Varnish made without the API: from its cache, or synthetic (deploy/varnish/default.vcl's 429). */
const ANSWERED_HERE = new Set(["hit", "synth"]);

/** One varnishncsa line: counted into `meter` when Varnish answered it for a named key; returns whether it was. */
export function countCacheLine(line: string, meter: Meter, nowMs: number): boolean {
  const [handling = "", status, bytes, key = "-", path = ""] = line.split(" ", 5);
  if (!ANSWERED_HERE.has(handling) || key === "-" || key === "") return false;
  const code = Number(status);
  if (!Number.isInteger(code)) return false;
  meter.count(key, routeOfPath(path), code, bytes === "-" ? 0 : Number(bytes) || 0, nowMs);
  return true;
}

export interface CacheLogOptions {
  /** varnishncsa's program. */
  program: string;
  /** Varnish's instance name (varnishd -n), or undefined for the default. */
  instance?: string;
  meter: Meter;
  now: () => number;
  onExit: (code: number | null, stderr: string) => void;
}

/** A follower of a front's log: what it has counted, and how to stop it. */
export interface LogFollower {
  stop(): void;
  readonly counted: number;
}

/** Starts varnishncsa and counts what Varnish answered itself until `stop`. */
export function followVarnish(options: CacheLogOptions): LogFollower {
  const args = ["-F", VARNISHNCSA_FORMAT, "-q", VARNISHNCSA_QUERY];
  if (options.instance) args.unshift("-n", options.instance);
  return follow(options.program, args, (line) => countCacheLine(line, options.meter, options.now()), options.onExit);
}

/**
 * The end of a line of deploy/nginx's `flash_sale_api` format: `"<method> <path>[?<query>] <protocol>" <status>
 * <bytes> "-" "<agent>" rt=<s> cache=<status> upstream=<status> key=<name>` (nginx writes a quote inside the agent or
 * the path as \x22).
 */
const NGINX_LINE =
  /"[A-Z]+ ([^"?]*)(?:\?[^"]*)? [^" ]+" (\d{3}) (\d+) "-" "[^"]*" rt=\S+ cache=(\S+) upstream=(\S+) key=(\S+)$/;

/**
 * nginx's cache statuses of an answer from a copy, without the API: a hit, and a copy served while one request
 * fetches its replacement (UPDATING, deploy/nginx's proxy_cache_use_stale updating) or stale (STALE). Not
 * REVALIDATED: the API answered that request's conditional fetch, and counted it.
 */
const FROM_CACHE = new Set(["HIT", "UPDATING", "STALE"]);

/** One access-log line of the shipped nginx: counted when nginx answered it for a named key; returns whether it was. */
export function countNginxLine(line: string, meter: Meter, nowMs: number): boolean {
  const m = NGINX_LINE.exec(line);
  if (!m) return false;
  const [, path, status, bytes, cache, upstream, key] = m;
  if (key === "-" || !(FROM_CACHE.has(cache!) || (status === "429" && upstream === "-"))) return false;
  const route = matchEndpoint(path!)?.route ?? ROUTE_INDEX.other;
  meter.count(key!, route, Number(status), Number(bytes), nowMs);
  return true;
}

/** What following a front's log needs: tail's program, the file, the meter counted into, the clock, what to do at exit. */
interface FollowOptions {
  /** tail's program. */
  program: string;
  file: string;
  meter: Meter;
  now: () => number;
  onExit: (code: number | null, stderr: string) => void;
}

/** Follows the log `file` from its end (through rotations, as `tail -F` does) until `stop`, each line to `countLine`. */
function followLines(countLine: typeof countNginxLine, options: FollowOptions): LogFollower {
  const args = ["-F", "-n", "0", options.file];
  return follow(options.program, args, (line) => countLine(line, options.meter, options.now()), options.onExit);
}

/** Follows the nginx access log `file`, counting what nginx answered (countNginxLine). */
export const followNginx = (options: FollowOptions): LogFollower => followLines(countNginxLine, options);

/** Runs `program`, passes each line of its output to `count`, and counts the lines it counted. */
function follow(
  program: string,
  args: string[],
  count: (line: string) => boolean,
  onExit: (code: number | null, stderr: string) => void,
): LogFollower {
  const child = spawn(program, args, { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (c: Buffer) => (stderr = (stderr + c.toString()).slice(-4096)));
  let counted = 0;
  createInterface({ input: child.stdout }).on("line", (line) => {
    if (count(line)) counted++;
  });
  child.once("exit", (code) => onExit(code, stderr));
  return {
    stop: () => void child.kill("SIGTERM"),
    get counted() {
      return counted;
    },
  };
}
