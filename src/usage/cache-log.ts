// Usage answered by a cache in front of the API: Varnish's own request log (varnishncsa, reading its shared memory
// log) gives every request it answered from the cache; each is counted against its key, as the servers count the
// requests that reach them. Only hits are counted here (misses and passes reach a server, which counts them), so
// nothing is counted twice. The key travels from varnishncsa's output (a pipe, never a file) into this process's
// memory only: it is hashed and looked up in the keys file at once, and only its name is kept.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { ApiError } from "../errors.ts";
import type { KeyRing } from "../serve/keys.ts";
import { parseTarget } from "../serve/request.ts";
import type { Meter } from "./meter.ts";

/**
 * varnishncsa's line per client request: how Varnish handled it (hit, miss, pass, pipe, synth), the status and body
 * bytes it sent, and the URL's query (with its leading `?`, or empty).
 */
export const VARNISHNCSA_FORMAT = "%{Varnish:handling}x %s %b %q";

/** One varnishncsa line: counted into `meter` when it is a hit with a valid key; returns whether it was counted. */
export function countCacheLine(line: string, keys: KeyRing, meter: Meter, nowMs: number): boolean {
  const [handling, status, bytes, query = ""] = line.split(" ", 4);
  if (handling !== "hit") return false;
  const code = Number(status);
  if (!Number.isInteger(code)) return false;
  let parsed;
  try {
    parsed = parseTarget(`/${query.startsWith("?") ? query : ""}`);
  } catch {
    return false;
  }
  const found = keys.check(parsed.query, nowMs);
  if (found instanceof ApiError) return false;
  meter.count(found.name, code, bytes === "-" ? 0 : Number(bytes) || 0, nowMs);
  return true;
}

export interface CacheLogOptions {
  /** varnishncsa's program. */
  program: string;
  /** Varnish's instance name (varnishd -n), or undefined for the default. */
  instance?: string;
  /** The keys in force (reloaded by the caller as the keys file changes). */
  keys: () => KeyRing;
  meter: Meter;
  now: () => number;
  onExit: (code: number | null, stderr: string) => void;
}

/** Starts varnishncsa and counts its hits until `stop`. */
export function followVarnish(options: CacheLogOptions): { stop(): void; readonly counted: number } {
  const args = ["-F", VARNISHNCSA_FORMAT, "-q", 'VCL_call eq "HIT"'];
  if (options.instance) args.unshift("-n", options.instance);
  const child = spawn(options.program, args, { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (c: Buffer) => (stderr = (stderr + c.toString()).slice(-4096)));
  let counted = 0;
  createInterface({ input: child.stdout }).on("line", (line) => {
    if (countCacheLine(line, options.keys(), options.meter, options.now())) counted++;
  });
  child.once("exit", (code) => options.onExit(code, stderr));
  return {
    stop: () => void child.kill("SIGTERM"),
    get counted() {
      return counted;
    },
  };
}
