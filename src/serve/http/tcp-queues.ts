// The kernel's account of the bytes written to each TCP connection and not acknowledged yet (`tx_queue` in
// /proc/net/tcp and tcp6, Linux only), keyed as node's socket names the connection (kernelKey): what send-limits.ts
// reads at a look.
import { readFile } from "node:fs/promises";
import { endianness } from "node:os";

/** An address as both node and the kernel's table give it: IPv4 dotted (IPv4-mapped too), IPv6 as a URL host has it. */
function canonical(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (!address.includes(":")) return address;
  try {
    return new URL(`http://[${address}]`).hostname;
  } catch {
    return address; // a zone (fe80::1%eth0): as node gave it
  }
}

/** The key of a connection in the kernel's table: local port, remote address and remote port. */
export function kernelKey(localPort: number, remoteAddress: string, remotePort: number): string {
  return `${localPort} ${canonical(remoteAddress)} ${remotePort}`;
}

const LITTLE_ENDIAN = endianness() === "LE";

/** An address of /proc/net/tcp{,6} (32-bit words in hex, each in host byte order) as `canonical` gives it. */
function procAddress(hex: string): string {
  const bytes: number[] = [];
  for (let w = 0; w < hex.length; w += 8) {
    const word = [0, 2, 4, 6].map((i) => parseInt(hex.slice(w + i, w + i + 2), 16));
    bytes.push(...(LITTLE_ENDIAN ? word.reverse() : word));
  }
  if (bytes.length === 4) return bytes.join(".");
  // IPv4-mapped (::ffff:a.b.c.d): node gives such a peer as IPv4, and so does `canonical`.
  if (bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff)
    return bytes.slice(12).join(".");
  const groups = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i]! << 8) | bytes[i + 1]!).toString(16));
  return canonical(groups.join(":"));
}

/**
 * The kernel's unacknowledged bytes (`tx_queue`) of the TCP connections whose local port is one of `ports`, by
 * kernelKey (the largest, should a key appear twice); null where /proc/net/tcp cannot be read (not Linux).
 */
export async function readUnacknowledged(ports: ReadonlySet<number>): Promise<Map<string, number> | null> {
  const tables = await Promise.all(
    ["/proc/net/tcp", "/proc/net/tcp6"].map((path) => readFile(path, "latin1").catch(() => null)),
  );
  if (tables.every((t) => t === null)) return null;
  const wanted = [...ports].map((p) => `:${p.toString(16).toUpperCase().padStart(4, "0")} `);
  const out = new Map<string, number>();
  for (const table of tables) {
    for (const line of table?.split("\n").slice(1) ?? []) {
      if (!wanted.some((w) => line.includes(w))) continue;
      const [, local, remote, , queues] = line.trim().split(/\s+/);
      if (!local || !remote || !queues) continue;
      const [, localPort] = local.split(":");
      const [remoteHex, remotePort] = remote.split(":");
      const key = `${parseInt(localPort!, 16)} ${procAddress(remoteHex!)} ${parseInt(remotePort!, 16)}`;
      const unacknowledged = parseInt(queues.split(":")[0]!, 16);
      out.set(key, Math.max(out.get(key) ?? 0, unacknowledged));
    }
  }
  return out;
}
