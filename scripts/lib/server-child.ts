// For the attack scripts: a sample snapshot in a temp dir, and the real server (`src/cli/serve.ts`) in a child process.
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { buildSnapshot } from "../../src/build/index.ts";
import { writeSampleCatalog } from "../../src/catalog/sample/index.ts";
import { createKey } from "../../src/keys/keys-file.ts";
import { SERVER_NODE_FLAGS } from "../../src/serve/server.ts";

export const ROOT = resolve(fileURLToPath(new URL("../..", import.meta.url)));
export const HOST = "127.0.0.1";

/** A port that was free a moment ago on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, HOST, () => {
      const address = s.address();
      const port = typeof address === "object" && address ? address.port : 0;
      s.close(() => resolvePort(port));
    });
  });
}

export interface PreparedData {
  root: string;
  dataDir: string;
  keysFile: string;
  /** A key without a rate limit, so that the attack measures the server, not the limiter. */
  key: string;
  /** Every resource path of the snapshot (`/v1/...`). */
  paths: string[];
  /** Words of product names and brands, size keys: material for search queries. */
  words: string[];
  brands: string[];
  sizeKeys: string[];
  cleanup(): Promise<void>;
}

/** Writes the sample catalog (`products`, `seed`, now), builds it for `http://127.0.0.1:<port>`, and makes a key. */
export async function prepareData(options: { products: number; seed: number; port: number }): Promise<PreparedData> {
  const root = await mkdtemp(join(tmpdir(), "fsa-attack-"));
  const catalogDir = join(root, "catalog");
  const dataDir = join(root, "data");
  const keysFile = join(root, "keys.json");
  await writeSampleCatalog(catalogDir, { products: options.products, seed: options.seed, now: new Date() });
  await buildSnapshot({ catalogDir, dataDir, baseUrl: `http://${HOST}:${options.port}` });
  const key = await createKey(keysFile, "attack", new Date(), { rate: 1e9, burst: 1e9 });
  const routes = JSON.parse(await readFile(join(dataDir, "current", "routes.json"), "utf8")) as { resources: Record<string, unknown> };
  const words = new Set<string>();
  const brands = new Set<string>();
  const sizeKeys = new Set<string>();
  const lines = (await readFile(join(catalogDir, "products.ndjson"), "utf8")).split("\n").filter(Boolean);
  for (const line of lines.slice(0, 1000)) {
    const p = JSON.parse(line) as { name: string; brand: string; skus: Array<{ size_key?: string }> };
    for (const w of p.name.split(/\s+/)) if (/^[A-Za-z]{3,}$/.test(w)) words.add(w.toLowerCase());
    brands.add(p.brand);
    for (const s of p.skus) if (s.size_key) sizeKeys.add(s.size_key);
  }
  return {
    root, dataDir, keysFile, key,
    paths: Object.keys(routes.resources).sort(),
    words: [...words].sort(),
    brands: [...brands].sort(),
    sizeKeys: [...sizeKeys].sort(),
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}

export interface ServerChild {
  child: ChildProcess;
  pid: number;
  port: number;
  /** Set when the child exits: its code or signal. */
  exit: { code: number | null; signal: NodeJS.Signals | null } | null;
  /** Everything the child wrote on stderr. */
  stderr: string[];
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when it has exited. */
  stop(graceMs?: number): Promise<void>;
}

/** Starts `src/cli/serve.ts` under node (one process, so `pid` is the server's own) and waits until it listens. */
export async function startServerChild(options: { dataDir: string; keysFile: string; port: number; env?: Record<string, string> }): Promise<ServerChild> {
  const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, "--import", "tsx", "src/cli/serve.ts"], {
    cwd: ROOT,
    env: { ...process.env, HOST, PORT: String(options.port), DATA_DIR: options.dataDir, KEYS_FILE: options.keysFile, LOG_REQUESTS: "0", ...options.env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  const stderr: string[] = [];
  const handle: ServerChild = {
    child, pid: child.pid ?? 0, port: options.port, exit: null, stderr,
    stop: (graceMs = 15_000) =>
      new Promise<void>((done) => {
        if (handle.exit) return done();
        const kill = setTimeout(() => child.kill("SIGKILL"), graceMs);
        child.once("exit", () => {
          clearTimeout(kill);
          done();
        });
        child.kill("SIGTERM");
      }),
  };
  child.on("exit", (code, signal) => {
    handle.exit = { code, signal };
  });
  await new Promise<void>((ready, reject) => {
    let buf = "";
    const timer = setTimeout(() => reject(new Error(`server did not start in 60 s:\n${stderr.join("")}`)), 60_000);
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (chunk: string) => {
      stderr.push(chunk);
      buf += chunk;
      if (buf.includes("serve: listening on")) {
        clearTimeout(timer);
        ready();
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening:\n${stderr.join("")}`));
    });
  });
  return handle;
}

/** Resident memory of a process, in MB (Linux /proc), or NaN when it cannot be read. */
export function rssMb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** CPU time (user + system) a process has used, in seconds (Linux /proc; assumes 100 ticks a second), or NaN. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

/** The q-th quantile (0..1) of sorted numbers. */
export function quantile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}
