// The server's open connections: the fields our code keeps on each socket, given once when it opens, and the sweep
// that asks the send limits about every connection and closes the idle ones (node's keep-alive timer is off: it was
// re-armed twice a request).
import type { Socket } from "node:net";
import type { SendLimits } from "./send-limits.ts";

/** Requests answered on a connection, kept on the socket itself (cheaper per request than a WeakMap). */
export const SERVED = Symbol("requestsServed");
/** The connection's peer address, read once when it opens rather than through node's getter on every request. */
export const ADDRESS = Symbol("peerAddress");
/** Keep-alive bookkeeping of the idle sweep: requests served and bytes read when it last looked, and since when (ms). */
const SEEN = Symbol("servedWhenSeen");
const READ = Symbol("readWhenSeen");
const QUIET = Symbol("quietSince");

export type Connection = Socket & {
  [SERVED]?: number;
  [ADDRESS]?: string;
  [SEEN]?: number;
  [READ]?: number;
  [QUIET]?: number;
  /** node's: the response being written on it, null between responses. */
  _httpMessage?: unknown;
};

/**
 * node's keep-alive timer is re-armed twice a request (a socket timeout cleared when a request arrives and set when its
 * response is done: 1-2% of a small response's cost in the profile); the idle connections are found instead by a
 * sweep over the open ones, this often at most (and at half the send limits' stall time): a connection is closed
 * between keepAliveTimeout and keepAliveTimeout + 1 s + a tick after its last response (node's own timer:
 * keepAliveTimeout + 1 s).
 */
const KEEP_ALIVE_TICK_MS = 1_000;
/** The shortest tick of that sweep (the send limits' ticks are half their stall time: tests set tiny ones). */
const MIN_TICK_MS = 25;
/** node's margin over the advertised `Keep-Alive: timeout=N` before it closes an idle connection. */
const KEEP_ALIVE_MARGIN_MS = 1_000;

/** What the sweep needs of the server's options. */
interface ConnectionsOptions {
  keepAliveTimeout: number;
  sendStall: number;
  sending: SendLimits;
}

/** The server's connections: `prepare` each new socket; `stop` ends the sweep (at close). */
export function createConnections(options: ConnectionsOptions) {
  const { sending, keepAliveTimeout, sendStall } = options;
  /** The connections open, for the idle sweep. */
  const open = new Set<Connection>();
  /**
   * Gives a new connection's socket, once, every property our code adds to it: the request counter, the peer address
   * (node caches it on the first read), the send limits' and the idle sweep's fields. Added on the first request
   * instead, at a point that depends on the request (and on whether its address had failed a key check), they gave
   * sockets different hidden classes after different traffic; node's own http and stream functions, which touch the
   * socket on every request, then saw several and were deoptimized to slower generic code for the rest of the
   * process's life (measured: a brotli sale list went from 19 to 23 us a request after a few minutes of mixed requests).
   */
  const prepare = (socket: Connection) => {
    socket[SERVED] = 0;
    socket[ADDRESS] = socket.remoteAddress ?? "";
    socket[SEEN] = 0;
    socket[READ] = 0;
    socket[QUIET] = 0;
    sending.connected(socket);
    open.add(socket);
    socket.once("close", () => open.delete(socket));
  };
  /**
   * Once a tick, for every connection: what it holds unacknowledged (the send limits track one written largeBytes past
   * what was last known acknowledged: a response costs nothing for them), then the keep-alive timeout: a connection
   * answered at least once, with no response being written, that has neither read a byte nor been sent a request since
   * the tick that last saw it move, for keepAliveTimeout (+ node's margin, less a tick), is idle: closed as node would
   * (through the send limits, which wait for its bytes to be acknowledged). One that never sent a request is left to
   * headersTimeout; with keepAliveTimeout 0 none is closed (node's meaning of 0).
   */
  const tick = Math.max(
    MIN_TICK_MS,
    Math.min(KEEP_ALIVE_TICK_MS, keepAliveTimeout > 0 ? keepAliveTimeout / 4 : Infinity, sendStall / 2),
  );
  const idleAfter = keepAliveTimeout > 0 ? keepAliveTimeout + KEEP_ALIVE_MARGIN_MS - tick : Infinity;
  const sweep = setInterval(() => {
    const now = Date.now();
    for (const socket of open) {
      sending.written(socket, socket[ADDRESS]!);
      const served = socket[SERVED]!;
      const read = socket.bytesRead;
      if (served !== socket[SEEN] || read !== socket[READ] || socket._httpMessage) {
        socket[SEEN] = served;
        socket[READ] = read;
        socket[QUIET] = now;
      } else if (served > 0 && now - socket[QUIET]! >= idleAfter) {
        socket[QUIET] = Infinity; // once: a connection kept until its bytes are acknowledged is not asked again
        sending.closeIdle(socket);
      }
    }
  }, tick);
  sweep.unref();
  return { prepare, stop: () => clearInterval(sweep) };
}
