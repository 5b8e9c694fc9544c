// deploy/haproxy's keys: the map of valid keys' hashes (`<sha256 hex> <name>:<rate>:<burst>:<interval>:<tolerance>`)
// written from the keys file, and a Front that keeps a running HAProxy's map in step through its runtime API
// (`stats socket`): a change as `set`/`add`/`del map`, the whole set as a new version (`prepare map`, `add map @<v>`,
// `commit map @<v>`) so that requests never see half a map.
import { randomBytes } from "node:crypto";
import { rename, unlink, writeFile } from "node:fs/promises";
import { createConnection } from "node:net";
import { DEFAULT_KEY_RATE_LIMIT } from "../config/defaults.ts";
import type { KeysFile } from "../keys/keys-file.ts";
import type { Front, KeyState } from "./front.ts";

/** The map's time unit: 10 us (deploy/haproxy's buckets count in these, modulo 2^32). */
const TICKS_PER_SECOND = 100_000;
/** The longest interval between two requests of a key (1 h) and the longest a bucket takes to fill (5 h). */
const MAX_INTERVAL = 3_600 * TICKS_PER_SECOND;
const MAX_TOLERANCE = 5 * 3_600 * TICKS_PER_SECOND;
/** Map lines per `add map` payload: HAProxy reads a command, payload included, into one buffer (16 KB). */
const LINES_PER_ADD = 100;
/** How long one runtime-API command may take before the front counts as not told. */
const COMMAND_TIMEOUT_MS = 10_000;

/** Every key of a keys file as the fronts are told of it at `nowMs`: its current hash, and replaced ones in grace. */
export function keyStatesOf(
  file: KeysFile,
  nowMs: number,
  limit: { rate: number; burst: number } = DEFAULT_KEY_RATE_LIMIT,
): KeyState[] {
  const states: KeyState[] = [];
  for (const k of file.keys) {
    const refused = k.revoked !== undefined || k.suspended !== undefined;
    const rate = k.rate ?? limit.rate;
    const burst = k.rate === undefined ? limit.burst : (k.burst ?? Math.max(1, Math.ceil(k.rate * 4)));
    const valid = (until: number) => (refused || until <= nowMs ? null : { name: k.name, rate, burst, until });
    states.push({ hash: k.hash, valid: valid(Infinity) });
    for (const p of k.previous ?? []) states.push({ hash: p.hash, valid: valid(Date.parse(p.until)) });
  }
  return states;
}

/** A valid key's map value: `<name>:<rate>:<burst>:<interval>:<tolerance>` (interval 0: not limited at the front). */
function mapValueOf(valid: NonNullable<KeyState["valid"]>): string {
  const exact = Math.round(TICKS_PER_SECOND / valid.rate);
  const interval = exact === 0 ? 0 : Math.min(MAX_INTERVAL, exact);
  const tolerance = Math.min(MAX_TOLERANCE, (valid.burst - 1) * interval);
  return `${valid.name}:${valid.rate}:${valid.burst}:${interval}:${tolerance}`;
}

/** The map's key of a keys-file hash: its hex digits. */
function mapKeyOf(hash: string): string {
  if (!/^sha256:[0-9a-f]{64}$/.test(hash)) throw new Error(`not a key hash: ${JSON.stringify(hash)}`);
  return hash.slice("sha256:".length);
}

/** The map file's text: one line per valid key, the rest left out. */
export function renderHaproxyMap(states: readonly KeyState[]): string {
  return states
    .filter((s) => s.valid !== null)
    .map((s) => `${mapKeyOf(s.hash)} ${mapValueOf(s.valid!)}\n`)
    .join("");
}

/** Writes the map file atomically (a temporary file renamed over it): HAProxy reads it whole when it starts. */
export async function writeHaproxyMap(path: string, states: readonly KeyState[]): Promise<void> {
  const tmp = `${path}.tmp-${process.pid}-${randomBytes(6).toString("hex")}`;
  try {
    await writeFile(tmp, renderHaproxyMap(states), { flag: "wx", mode: 0o644 });
    await rename(tmp, path);
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
}

/** `host:port` (TCP) or a path (a unix socket). */
function connectTo(address: string) {
  const tcp = /^(.*):(\d+)$/.exec(address);
  return tcp && !address.startsWith("/")
    ? createConnection({ host: tcp[1]!.replace(/^\[|\]$/g, ""), port: Number(tcp[2]) })
    : createConnection({ path: address });
}

/** One runtime-API command (a connection of its own, non-interactive): its output. */
export function runtimeCommand(address: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connectTo(address);
    let output = "";
    socket.setTimeout(COMMAND_TIMEOUT_MS, () => socket.destroy(new Error(`${address}: no answer to ${command}`)));
    socket.setEncoding("utf8");
    socket.on("data", (c: string) => (output += c));
    socket.on("error", reject);
    socket.on("close", () => resolve(output));
    socket.end(command.endsWith("\n") ? command : command + "\n");
  });
}

/** The output of a command that prints nothing when it succeeds; anything else is its error. */
async function quietCommand(address: string, command: string): Promise<void> {
  const output = (await runtimeCommand(address, command)).trim();
  if (output !== "") throw new Error(`haproxy ${address}: ${command.split("\n")[0]}: ${output}`);
}

/** The map's name in the runtime API: the one `show map` lists whose file ends with `/keys.map`. */
async function findMap(address: string, suffix: string): Promise<string> {
  const listed = await runtimeCommand(address, "show map");
  const file = [...listed.matchAll(/^-?\d+ \(([^)]+)\)/gm)].map((m) => m[1]!).find((f) => f.endsWith(suffix));
  if (!file) throw new Error(`haproxy ${address}: no map ending in ${suffix} (show map: ${listed.trim()})`);
  return file;
}

/**
 * A Front for the HAProxy whose runtime API is at `address` (`host:port` or a unix socket's path, `level admin`),
 * its map the one whose file ends with `map` (deploy/haproxy: `/keys.map`). Pushes and resyncs run one at a time.
 */
export function createHaproxyFront(name: string, address: string, map = "/keys.map"): Front {
  let mapName: Promise<string> | null = null;
  const mapOf = () => {
    mapName ??= findMap(address, map);
    // Found again next time if it could not be found (HAProxy not started yet, or restarted).
    mapName.catch(() => (mapName = null));
    return mapName;
  };
  let queue: Promise<unknown> = Promise.resolve();
  const serial = (work: () => Promise<void>): Promise<void> => {
    const run = queue.then(work, work);
    queue = run.catch(() => undefined);
    return run;
  };

  const push = async (changes: readonly KeyState[]) => {
    const m = await mapOf();
    for (const c of changes) {
      const key = mapKeyOf(c.hash);
      if (c.valid === null) {
        const out = (await runtimeCommand(address, `del map ${m} ${key}`)).trim();
        if (out !== "" && !/not found/i.test(out)) throw new Error(`haproxy ${address}: del map: ${out}`);
        continue;
      }
      const value = mapValueOf(c.valid);
      const out = (await runtimeCommand(address, `set map ${m} ${key} ${value}`)).trim();
      if (/not found/i.test(out)) await quietCommand(address, `add map ${m} ${key} ${value}`);
      else if (out !== "") throw new Error(`haproxy ${address}: set map: ${out}`);
    }
  };

  const resync = async (all: readonly KeyState[]) => {
    const m = await mapOf();
    const prepared = await runtimeCommand(address, `prepare map ${m}`);
    const version = /New version created: (\d+)/.exec(prepared)?.[1];
    if (!version) throw new Error(`haproxy ${address}: prepare map: ${prepared.trim()}`);
    const lines = renderHaproxyMap(all).split("\n").filter(Boolean);
    for (let i = 0; i < lines.length; i += LINES_PER_ADD)
      await quietCommand(address, `add map @${version} ${m} <<\n${lines.slice(i, i + LINES_PER_ADD).join("\n")}\n\n`);
    await quietCommand(address, `commit map @${version} ${m}`);
  };

  return {
    name,
    push: (changes) => serial(() => push(changes)),
    resync: (all) => serial(() => resync(all)),
  };
}
