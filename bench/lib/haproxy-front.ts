// The edge benchmark's HAProxy (deploy/haproxy): started with its map written from the keys file, one thread on the
// fronts' core; and what its memory is with 100,000 keys in the map, each with a bucket in its stick table.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { startHaproxyFront } from "../../scripts/lib/haproxy-front.ts";
import { rssMb } from "../../scripts/lib/proc.ts";
import { requireProgram } from "../../scripts/lib/test-programs.ts";
import { createHaproxyFront, keyStatesOf, renderHaproxyMap } from "../../src/edge/haproxy.ts";
import type { KeyState } from "../../src/edge/front.ts";
import { generateKey, hashKey, loadKeysFile } from "../../src/keys/keys-file.ts";
import { runWrk } from "./wrk.ts";

interface EdgeOptions {
  dir: string;
  port: number;
  upstreamPort: number;
  cpus?: string;
}

/** deploy/haproxy in front of the server, its map every key of `keysFile`. */
export async function startHaproxyEdge(o: EdgeOptions & { keysFile: string }) {
  const states = keyStatesOf(await loadKeysFile(o.keysFile), Date.now());
  const { keysFile: _k, ...rest } = o;
  return startHaproxyFront({ program: requireProgram("haproxy"), map: renderHaproxyMap(states), threads: 1, ...rest });
}

/**
 * HAProxy's resident memory (MB) with 1 key, with `n` keys in its map, and once each of them has made a request (a
 * bucket each: their rate is 50/s, so they are limited here); and how long a resync of the `n` took.
 */
export async function haproxyMemory(o: EdgeOptions & { path: string; n: number; wrkCore: number | null }) {
  const keys = Array.from({ length: o.n }, () => generateKey());
  const states: KeyState[] = keys.map((k, i) => ({
    hash: hashKey(k),
    valid: { name: `m-${i}`, rate: 50, burst: 200, until: Infinity },
  }));
  const h = await startHaproxyFront({
    program: requireProgram("haproxy"),
    map: renderHaproxyMap(states.slice(0, 1)),
    threads: 1,
    ...o,
  });
  try {
    const oneKeyMb = rssMb(h.child.pid!);
    const started = Date.now();
    await createHaproxyFront("memory", h.socket).resync(states);
    const resyncMs = Date.now() - started;
    const mapMb = rssMb(h.child.pid!);
    const script = join(o.dir, "every-key.lua");
    await writeFile(
      script,
      [
        `local keys = {${keys.map((k) => `"${k}"`).join(",")}}`,
        "local i = 0",
        `request = function() i = i % #keys + 1; return wrk.format("GET", "${o.path}?apikey=" .. keys[i]) end`,
      ].join("\n"),
    );
    // One connection: the keys go round in order, each at least once in the time given.
    const run = await runWrk(`${h.url}${o.path}`, {
      core: o.wrkCore,
      connections: 1,
      duration: Math.max(5, Math.ceil(o.n / 2_500)),
      headers: {},
      script,
    });
    return { oneKeyMb, mapMb, bucketsMb: rssMb(h.child.pid!), resyncMs, requests: run.requests, non2xx: run.non2xx };
  } finally {
    await h.stop();
  }
}
