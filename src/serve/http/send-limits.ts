// Clients that do not read what they asked for: how many of one address's connections may hold bytes the client has
// not acknowledged, and for how long, so that such clients cannot fill the kernel's socket memory.
//
// Why the kernel's own account. Node counts a response as sent once the kernel has taken its bytes, and over
// loopback the kernel takes about 2.5 MB a connection from a client that reads nothing: all of /docs (2.6 MB), so
// 300 such connections held 757 MB of kernel memory while node had nothing pending. (Over a real network a client
// that does not read keeps the kernel's share far smaller, and the rest waits in node.) And a connection node closes
// (its keep-alive timeout, `Connection: close`) keeps its unacknowledged bytes queued as an orphan, for minutes
// (5.5 min measured over loopback) while the client stays connected without reading. Linux lists every TCP
// connection with the bytes written to it and not acknowledged (`tx_queue` in /proc/net/tcp and tcp6, tcp-queues.ts):
// that is read for the connections tracked, when a decision needs it (a look reads the line of every TCP connection of
// the host, so looks are at least 100 ms apart). Without /proc (not Linux) only node's pending bytes count, which still
// bounds clients over real networks. Over TLS node counts plaintext and the kernel records, a little more: a
// connection is let go a little later, never sooner.
//
// Invariants: a connection written `largeBytes` or more since its bytes were last known acknowledged (seen by `written`,
// which the server calls for every connection once a tick, not per response) is tracked until
// they are, or until neither it nor its orphan exists; it is stalled once its acknowledged bytes have not moved for
// `stall` (a reader's move within milliseconds, so a CDN's or a proxy's many connections never count); an address
// with `maxPerAddress` stalled is refused after one fresh look at the kernel's account, and one with more (a burst
// served before it stalled) has the excess reset; a connection whose tracked bytes are not acknowledged within `timeout` is reset
// (RST: the kernel frees its buffers at once), an orphan tracked until the kernel drops it.
import type { Socket } from "node:net";
import { TLSSocket } from "node:tls";
import { kernelKey, readUnacknowledged } from "./tcp-queues.ts";

export interface SendLimitsOptions {
  /** Connections of one client address that may hold unacknowledged bytes, stalled, at once. */
  maxPerAddress: number;
  /**
   * Time a tracked connection's acknowledged bytes must stand still before it counts as stalled, ms: a client that
   * reads (however many connections it has, as a CDN or a proxy does) acknowledges within milliseconds.
   */
  stall: number;
  /** Time a connection's tracked bytes may stay unacknowledged, ms. */
  timeout: number;
  /** Bytes written to a connection, unacknowledged, from which it is tracked. */
  largeBytes: number;
}

/** Fresh looks at the kernel's account are at least this far apart, ms (a look reads every TCP connection's line). */
const MIN_LOOK_INTERVAL_MS = 100;
/**
 * Head bytes a response may add to its body, at most, in `sent`'s reckoning: ours are under 1 KiB. Overcounted, a
 * connection is looked at a little sooner than needed; it is never looked at later than `largeBytes`.
 */
const HEAD_BYTES_MAX = 8 * 1024;
/** Past this many tracked, a look is taken (throttled as above) so that what has been read is let go early. */
const LOOK_AT_SIZE = 1_024;

/** What a connection carries for the limits, set once when it opens (connected) so that sockets keep one shape. */
const CHECK_FROM = Symbol("sendCheckFrom");
const TRACKED = Symbol("sendTracked");
const DUE = Symbol("sendDue");
const KERNEL_KEY = Symbol("sendKernelKey");
type Connection = Socket & {
  /** Bytes written from which `written` looks at it: where its bytes were last known acknowledged, + largeBytes. */
  [CHECK_FROM]?: number;
  [TRACKED]?: Tracked | null;
  /** Bytes that may still be written to it, by the handler's count of bodies (sent), before it is looked at. */
  [DUE]?: number;
  /** Its kernelKey, made the first time it is tracked. */
  [KERNEL_KEY]?: string | null;
};

interface Tracked {
  /** null once node has closed it (seen at a look): the kernel may still hold its bytes, as an orphan. */
  socket: Connection | null;
  address: string;
  /** Its local port, remote address and port, as /proc/net/tcp lists them (kernelKey). */
  key: string;
  /** The bytes written to the socket (its bytesWritten) that must be acknowledged for it to be let go. */
  upTo: number;
  /** When it is reset if its bytes are still not acknowledged then (ms): `timeout` after it was tracked. */
  deadline: number;
  /** Close the connection once its bytes are acknowledged (it went idle meanwhile). */
  closeOnRelease: boolean;
  /** Its bytes known acknowledged (bytesWritten then) at the last look, and since when they have not moved (ms). */
  acknowledged: number;
  since: number;
}

export interface SendLimits {
  /** A new connection: gives its socket the fields the limits keep on it. */
  connected(socket: Socket): void;
  /** Whether `address` has `maxPerAddress` stalled connections (as last seen: see `look`). */
  full(address: string): boolean;
  /** Looks at the kernel's account (at most once every 100 ms), letting go what has been acknowledged. */
  look(): Promise<void>;
  /**
   * After a response whose body was `bytes` long was written on `socket`: `written`, once the bodies written since it
   * last looked (and HEAD_BYTES_MAX each for their heads) may have reached the mark. A subtraction per response.
   */
  sent(socket: Socket, address: string, bytes: number): void;
  /**
   * Tracks `socket` if it holds `largeBytes` or more not known acknowledged: what `sent` calls, and what the server
   * asks of every connection once a tick (for bytes no handler counted: event streams, responses sent later).
   */
  written(socket: Socket, address: string): void;
  /**
   * Closes an idle connection (past its keep-alive timeout), at once if it is not tracked; a tracked one once its
   * bytes are acknowledged, or by a reset when they are not in time: closed before, it would leave them queued in
   * the kernel, as an orphan the kernel keeps for minutes while the client stays connected without reading.
   */
  closeIdle(socket: Socket): void;
}

/**
 * Resets a connection (RST): the kernel frees its buffers at once. A TLS socket is reset through the TCP socket it
 * runs on (node's `_parent`: `resetAndDestroy` refuses a TLS socket's own handle).
 */
function resetConnection(socket: Socket): void {
  const tcp = socket instanceof TLSSocket ? (socket as TLSSocket & { _parent?: Socket })._parent : socket;
  if (tcp && !tcp.destroyed) tcp.resetAndDestroy();
  socket.destroy();
}

/**
 * Bytes written to `socket`, those still in node's buffer included: node's count of bytes handed to the kernel plus
 * what waits. `socket.bytesWritten` says the same, but builds an array of the write buffer on every read, which the
 * check after each response made once a request (perf: 1-2% of the server's time); its own field where node has it.
 */
function bytesWritten(socket: Socket): number {
  const dispatched = (socket as Socket & { _bytesDispatched?: number })._bytesDispatched;
  return typeof dispatched === "number" ? dispatched + socket.writableLength : socket.bytesWritten;
}

/**
 * Tracks connections holding unacknowledged bytes, per client address (see the top of this file). A response costs
 * one comparison (`written`); the bookkeeping of what is tracked (deadlines, closed sockets, stalls) is done at each
 * look, every half stall while anything is tracked, with no timer or listener per connection.
 */
export function createSendLimits(options: SendLimitsOptions): SendLimits {
  const byAddress = new Map<string, Set<Tracked>>();
  const l: Limits = { options, byAddress, size: 0, looking: null, lastLook: -Infinity, timer: null };

  /** See SendLimits.written. */
  const written = (socket: Socket, address: string): void => {
    const c = socket as Connection;
    const upTo = bytesWritten(c);
    const from = c[CHECK_FROM] ?? options.largeBytes;
    // Most connections: below the mark. A socket never given its fields (connected) has none: from 0.
    if (upTo < from || c[TRACKED]) {
      c[DUE] = c[TRACKED] ? options.largeBytes : from - upTo;
      return;
    }
    track(l, c, address, upTo);
    c[DUE] = options.largeBytes;
    if (l.size > LOOK_AT_SIZE) void look(l);
    else schedule(l);
  };

  return {
    connected(socket) {
      const c = socket as Connection;
      c[CHECK_FROM] = options.largeBytes;
      c[TRACKED] = null;
      c[KERNEL_KEY] = null;
      c[DUE] = options.largeBytes;
    },
    full(address) {
      const set = byAddress.size === 0 ? undefined : byAddress.get(address);
      if (!set || set.size < options.maxPerAddress) return false;
      const now = Date.now();
      let n = 0;
      for (const t of set) if (stalled(t, now, options.stall) && ++n >= options.maxPerAddress) return true;
      return false;
    },
    look: () => look(l),
    sent(socket, address, bytes) {
      const c = socket as Connection;
      if ((c[DUE] = (c[DUE] ?? 0) - bytes - HEAD_BYTES_MAX) <= 0) written(socket, address);
    },
    written,
    closeIdle(socket) {
      const t = (socket as Connection)[TRACKED];
      if (!t) return void socket.destroy();
      t.closeOnRelease = true;
      void look(l); // read by now, most likely: closed then
    },
  };
}

/**
 * What the steps below share: the options, the connections tracked by client address, and the looks. The request
 * path (`sent`, `written`, `full`) reads its fields only once a connection is to be tracked or an address is full.
 */
interface Limits {
  readonly options: SendLimitsOptions;
  readonly byAddress: Map<string, Set<Tracked>>;
  /** Connections tracked, every address's. */
  size: number;
  /** The look under way, if any; when the last one ended (ms); the timer of the next, while anything is tracked. */
  looking: Promise<void> | null;
  lastLook: number;
  timer: NodeJS.Timeout | null;
}

/** Tracks `socket` until its bytes up to `upTo` (its bytesWritten) are acknowledged. */
function track(l: Limits, socket: Connection, address: string, upTo: number): void {
  if (socket.destroyed) return;
  let key = socket[KERNEL_KEY];
  if (!key) {
    if (socket.remoteAddress === undefined || socket.remotePort === undefined) return;
    key = socket[KERNEL_KEY] = kernelKey(socket.localPort ?? 0, socket.remoteAddress, socket.remotePort);
  }
  const now = Date.now();
  const t: Tracked = {
    socket,
    address,
    key,
    upTo,
    deadline: now + l.options.timeout,
    closeOnRelease: false,
    acknowledged: (socket[CHECK_FROM] ?? l.options.largeBytes) - l.options.largeBytes,
    since: now,
  };
  socket[TRACKED] = t;
  let set = l.byAddress.get(address);
  if (!set) l.byAddress.set(address, (set = new Set()));
  set.add(t);
  l.size++;
}

/** Stops tracking `t`; `acknowledged`: where its socket's bytes are known acknowledged now. */
function release(l: Limits, t: Tracked, acknowledged: number): void {
  const set = l.byAddress.get(t.address);
  if (!set?.delete(t)) return;
  l.size--;
  if (set.size === 0) l.byAddress.delete(t.address);
  const socket = t.socket;
  if (!socket) return;
  socket[TRACKED] = null;
  socket[DUE] = 0; // looked at after its next response
  if (t.closeOnRelease) return void socket.destroy();
  socket[CHECK_FROM] = acknowledged + l.options.largeBytes;
  // Written while it was tracked (pipelined responses), and not acknowledged yet: tracked anew.
  const total = bytesWritten(socket);
  if (total - acknowledged >= l.options.largeBytes) track(l, socket, t.address, total);
}

/** A tracked socket node has closed since: an orphan from now on (its bytes may still be in the kernel). */
function orphan(t: Tracked): void {
  const socket = t.socket;
  if (!socket?.destroyed) return;
  socket[TRACKED] = null;
  t.socket = null;
}

/** See SendLimits.look: the look under way, or a new one; the next is scheduled once it is done. */
function look(l: Limits): Promise<void> {
  return (l.looking ??= lookNow(l).finally(() => {
    l.looking = null;
    schedule(l);
  }));
}

/**
 * A look (once MIN_LOOK_INTERVAL_MS have passed since the last): lets go of each tracked connection whose bytes the
 * kernel's account shows acknowledged (an orphan, once the kernel no longer holds any of it), notes which still read,
 * resets those past their deadline, then the excess of the addresses past their cap.
 */
async function lookNow(l: Limits): Promise<void> {
  const wait = l.lastLook + MIN_LOOK_INTERVAL_MS - Date.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  // What node had handed to the kernel, before the kernel is asked: so `handed - unacknowledged` never overstates.
  const all = [...l.byAddress.values()].flatMap((set) => [...set]);
  all.forEach(orphan);
  const handed = all.map((t) => (t.socket ? bytesWritten(t.socket) - t.socket.writableLength : 0));
  const ports = new Set(all.map((t) => Number(t.key.split(" ", 1)[0])));
  const kernel = await readUnacknowledged(ports).catch(() => null);
  const now = Date.now();
  all.forEach((t, i) => {
    orphan(t);
    const unacknowledged = kernel?.get(t.key);
    if (!t.socket) {
      if (!unacknowledged) release(l, t, 0); // the orphan is gone, or has delivered everything
      return;
    }
    const acknowledged = handed[i]! - (unacknowledged ?? 0);
    if (acknowledged >= t.upTo) return release(l, t, acknowledged);
    if (acknowledged > t.acknowledged) {
      t.acknowledged = acknowledged; // it reads: not stalled
      t.since = now;
    }
    // Not acknowledged in time: reset it (first: a close, closeOnRelease, would leave the bytes queued); its
    // bytes are gone with it, nothing to track anew.
    if (now >= t.deadline) {
      resetConnection(t.socket);
      release(l, t, Infinity);
    }
  });
  l.lastLook = Date.now();
  resetExcess(l, l.lastLook);
}

/** Whether `t`'s acknowledged bytes have stood still for `stall` ms by `now`. */
function stalled(t: Tracked, now: number, stall: number): boolean {
  return now - t.since >= stall;
}

/**
 * An address past its cap of stalled connections (they were served before they stalled: a burst of requests from a
 * client that then reads nothing) keeps its oldest `maxPerAddress`; the others are reset, their buffers freed now.
 */
function resetExcess(l: Limits, now: number): void {
  for (const set of [...l.byAddress.values()]) {
    const idle = [...set].filter((t) => t.socket && stalled(t, now, l.options.stall));
    for (const t of idle.slice(l.options.maxPerAddress)) {
      resetConnection(t.socket!);
      release(l, t, Infinity);
    }
  }
}

/**
 * While connections are tracked, a look every half stall, so that readers are let go, stalls are seen and deadlines
 * kept.
 */
function schedule(l: Limits): void {
  if (l.timer || l.size === 0) return;
  l.timer = setTimeout(
    () => {
      l.timer = null;
      void look(l);
    },
    Math.max(MIN_LOOK_INTERVAL_MS, Math.min(l.options.stall / 2, l.options.timeout)),
  ).unref();
}
