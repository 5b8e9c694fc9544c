// The sender's connections (send.ts): each made through the address guard (node:net and node:tls connect with the
// guard's `lookup`, so every address a name resolves to is checked at the moment of connecting, and the connection
// goes to a checked address; an address in the URL was checked by the sender itself), over TLS with the host's name
// as servername and the certificate verified against the system's authorities (or the tests' `ca`). A connection
// whose answer was read to its end is kept idle for the next delivery to its origin (the most recently used taken
// first), at most IDLE_SOCKETS idle over every origin and for IDLE_MS (less if the receiver's Keep-Alive says less);
// bytes arriving on an idle connection close it. TLS sessions are kept by origin (the last TLS_SESSIONS) to resume.
import { isIP, connect as netConnect } from "node:net";
import type { Socket } from "node:net";
import { connect as tlsConnect } from "node:tls";
import type { AddressGuard } from "./address-guard.ts";

/** How long a connection is kept idle for the next delivery to its origin, ms (less if the receiver says less). */
const IDLE_MS = 2_000;
/** The most connections kept idle, over every origin: beyond, a connection is closed once its answer is read. */
const IDLE_SOCKETS = 64;
/** A receiver's idle limit is taken as this much shorter, ms, so that the connection is not reused as it closes. */
const HINT_MARGIN_MS = 1_000;
/** Origins whose last TLS session is kept for the next connection's handshake. */
const TLS_SESSIONS = 100;

/** Where a connection goes: plain http or https, the host (a name, or an address without brackets), the port. */
export interface Origin {
  plain: boolean;
  host: string;
  port: number;
  /** The pool's name for the origin (scheme, host and port). */
  key: string;
}

/** What the attempt using a connection hears of it. */
interface ConnectionUser {
  data(chunk: Buffer): void;
  /** The connection closed (with the socket's error, if any) while the attempt used it. */
  closed(error: NodeJS.ErrnoException | null): void;
}

/** A connection and who uses it now (null while it is idle). */
export interface Connection {
  readonly socket: Socket;
  /** Whether it carried an earlier delivery (taken idle from the pool). */
  readonly reused: boolean;
  user: ConnectionUser | null;
}

/** The sender's connections, idle ones kept by origin. */
export interface SendPool {
  /** An idle connection to `origin` (unless `fresh`), or a new one made through `guard`. */
  take(origin: Origin, guard: AddressGuard, ca: string | undefined, fresh: boolean): Connection;
  /** Gives back a connection whose answer was read to its end: kept idle, or closed beyond the bounds. */
  give(connection: Connection, keepAliveMs: number | null): void;
  /** The idle connections now. */
  idle(): Socket[];
  /** Closes every connection, idle or not. */
  close(): void;
}

class PooledConnection implements Connection {
  user: ConnectionUser | null = null;
  reused = false;
  readonly socket: Socket;
  /** Its origin's key. */
  readonly key: string;
  private error: NodeJS.ErrnoException | null = null;
  constructor(socket: Socket, key: string, forget: (c: PooledConnection) => void) {
    this.socket = socket;
    this.key = key;
    socket.on("data", (chunk: Buffer) => (this.user ? this.user.data(chunk) : socket.destroy()));
    socket.on("error", (err: NodeJS.ErrnoException) => (this.error = err));
    socket.on("timeout", () => this.user === null && socket.destroy());
    socket.on("close", () => {
      const user = this.user;
      this.user = null;
      forget(this);
      user?.closed(this.error);
    });
  }
}

/** A new connection to `origin`: its address checked at connect time by the guard's `lookup`. */
function connectTo(origin: Origin, guard: AddressGuard, ca: string | undefined, session: Buffer | undefined): Socket {
  const settings = {
    host: origin.host,
    port: origin.port,
    lookup: guard.lookup(origin.plain),
    noDelay: true,
    keepAlive: true,
    keepAliveInitialDelay: 1_000,
  };
  if (origin.plain) return netConnect(settings);
  return tlsConnect({
    ...settings,
    // No SNI for an address (the certificate is still checked against it: tls uses the host then).
    servername: isIP(origin.host) ? "" : origin.host,
    ...(ca ? { ca } : {}),
    ...(session ? { session } : {}),
  });
}

/** A pool of the sender's connections. */
export function createSendPool(): SendPool {
  const idle = new Map<string, PooledConnection[]>();
  let idleCount = 0;
  const all = new Set<PooledConnection>();
  const sessions = new Map<string, Buffer>();
  let closed = false;

  const unlist = (c: PooledConnection): boolean => {
    const list = idle.get(c.key);
    const at = list ? list.indexOf(c) : -1;
    if (at < 0) return false;
    list!.splice(at, 1);
    if (list!.length === 0) idle.delete(c.key);
    idleCount--;
    return true;
  };
  const forget = (c: PooledConnection) => {
    all.delete(c);
    unlist(c);
  };

  const connect = (origin: Origin, guard: AddressGuard, ca: string | undefined) => {
    const socket = connectTo(origin, guard, ca, sessions.get(origin.key));
    if (!origin.plain) {
      socket.on("session", (session: Buffer) => {
        sessions.delete(origin.key);
        sessions.set(origin.key, session);
        if (sessions.size > TLS_SESSIONS) sessions.delete(sessions.keys().next().value!);
      });
      socket.on("error", () => sessions.delete(origin.key));
    }
    const c = new PooledConnection(socket, origin.key, forget);
    all.add(c);
    return c;
  };

  return {
    take(origin, guard, ca, fresh) {
      const list = fresh ? undefined : idle.get(origin.key);
      let c: PooledConnection | undefined;
      while (list && list.length > 0 && !c) {
        const last = list.at(-1)!;
        unlist(last);
        if (last.socket.destroyed || !last.socket.writable) last.socket.destroy();
        else c = last;
      }
      if (!c) return connect(origin, guard, ca);
      c.socket.setTimeout(0);
      c.socket.ref();
      c.reused = true;
      return c;
    },
    give(connection, keepAliveMs) {
      const c = connection as PooledConnection;
      c.user = null;
      const hinted = keepAliveMs === null ? IDLE_MS : Math.min(IDLE_MS, keepAliveMs - HINT_MARGIN_MS);
      if (closed || c.socket.destroyed || hinted <= 0 || idleCount >= IDLE_SOCKETS) return void c.socket.destroy();
      c.socket.setTimeout(hinted);
      c.socket.unref();
      const list = idle.get(c.key);
      if (list) list.push(c);
      else idle.set(c.key, [c]);
      idleCount++;
    },
    idle: () => [...idle.values()].flat().map((c) => c.socket),
    close() {
      closed = true;
      for (const c of [...all]) c.socket.destroy();
    },
  };
}
