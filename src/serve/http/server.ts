// The HTTP(S) server around a handler: timeouts and limits for slow or broken clients, and a graceful close.
import { createServer, STATUS_CODES } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { Server as HttpsServer } from "node:https";
import type { Socket } from "node:net";
import { ApiError, renderProblem } from "../../errors.ts";
import type { Handler } from "../handler.ts";
import { ADDRESS, createConnections, SERVED } from "./connections.ts";
import type { Connection } from "./connections.ts";
import { createSendLimits } from "./send-limits.ts";
import { TLS_SERVER_OPTIONS } from "./tls.ts";
import type { TlsPair } from "./tls.ts";

export interface ServerOptions {
  /** Time a client has to send its request headers, ms. Default 10 000. */
  headersTimeout?: number;
  /** Time a client has to send its whole request, ms. Default 15 000. */
  requestTimeout?: number;
  /** Idle time before a keep-alive connection is closed, ms. Default 5 000. */
  keepAliveTimeout?: number;
  /**
   * Requests one keep-alive connection may carry before it is closed (so that a CDN's or proxy's long-lived
   * connections are spread again over the servers now and then). Default 10 000. At 1 000 (nginx's
   * keepalive_requests) a client sending 50,000 requests/s over 64 connections had every connection torn down and
   * reopened about once a second, all at nearly the same moment: 7% fewer requests/s and twice the p99 latency.
   */
  maxRequestsPerSocket?: number;
  /**
   * Connections open at once; more are refused. Default 16 384: room for requests beside the event streams a server
   * holds (10,000 at most, src/serve/events/hub.ts), so that one whose streams are all taken still answers the lists,
   * /healthz and the clients that poll.
   */
  maxConnections?: number;
  /** Largest request header block, bytes (larger is a 431). Default 16 384. */
  maxHeaderSize?: number;
  /**
   * Connections of one client address (the connection's, as the server sees it: a proxy's, behind one) that may hold
   * `sendTrackBytes` or more the client has not acknowledged, in node or in the kernel (send-limits.ts): a client
   * that does not read what it asked for. A request from an address at the cap is answered 503
   * `service_unavailable` (`Retry-After: 1`) once the kernel's account, looked at again, confirms it; by the server
   * itself, so that answer is in neither the request log nor the metrics. Default 16.
   */
  maxSendingPerAddress?: number;
  /**
   * Time such bytes may stay unacknowledged, ms; past it the connection is reset (RST), which frees its kernel
   * buffers at once (a close would leave them queued, for minutes, to a client that does not read). Default 60 000:
   * /docs (2.6 MB) to a client reading at 350 kbit/s.
   */
  sendTimeout?: number;
  /** Unacknowledged bytes from which a connection counts against `maxSendingPerAddress`. Default 262 144 (256 KiB). */
  sendTrackBytes?: number;
  /**
   * Time such a connection's acknowledged bytes must stand still before it counts against `maxSendingPerAddress`, ms:
   * a client that reads, with however many connections (a CDN, a proxy, wrk's 64), never counts. Default 1 000.
   */
  sendStall?: number;
  /**
   * Certificate and key (PEM): the server speaks HTTPS (HTTP/1.1 only) with TLS_SERVER_OPTIONS (TLS 1.2 or 1.3,
   * forward-secret AEAD suites only) and every response carries `Strict-Transport-Security`. Renewals go to
   * `server.setSecureContext` (see tls.ts). Default none: plain HTTP.
   */
  tls?: Pick<TlsPair, "cert" | "key">;
}

/** `Strict-Transport-Security` of every HTTPS response: a year, as the API is HTTPS-only (not on plain HTTP, RFC 6797). */
export const HSTS = "max-age=31536000";

export const SERVER_DEFAULTS: Required<Omit<ServerOptions, "tls">> = {
  headersTimeout: 10_000,
  requestTimeout: 15_000,
  keepAliveTimeout: 5_000,
  maxRequestsPerSocket: 10_000,
  maxConnections: 16_384,
  maxHeaderSize: 16 * 1024,
  maxSendingPerAddress: 16,
  sendTimeout: 60_000,
  sendTrackBytes: 256 * 1024,
  sendStall: 1_000,
};

/**
 * Node options the server process runs with (`npm start` and `npm run serve` pass them; so does the serve benchmark,
 * to every server it compares). `--no-memory-reducer`: V8's memory reducer, meant to shrink the heap of an idle
 * program, ran a full collection about 100 s into serving under load; the maps it freed deoptimized node's http
 * functions, which, reoptimized on mixed traffic, stayed slower for the rest of the process's life (a brotli sale
 * list went from 19 to 23 us a request, measured with `npm run bench -- serve`). A server holding a snapshot has a
 * heap that does not shrink anyway; collections triggered by allocation still run as usual.
 * `--max-semi-space-size=16`: the young generation of Node 20 (two 16 MB semi-spaces) on every Node. Node 24 lets
 * them grow to 64 MB each on a machine with much memory, and the soak server's RSS rose by 50-110 MB with it, past
 * its 512 MB budget in one run of six (`npm run soak`: 443-512 MB under Node 24, 347-409 MB with this; 400 MB under
 * Node 20, where this is the default and changes nothing).
 */
export const SERVER_NODE_FLAGS: readonly string[] = ["--no-memory-reducer", "--max-semi-space-size=16"];

/**
 * Connections the kernel queues before the server accepts them, as many as the host allows: the kernel caps it at
 * net.core.somaxconn (4096 on current Linux; raise it for more). node's default, 511, overflowed when 10,000 event
 * streams reconnected at once (`npm run bench -- events-resume`: 10-17 thousand SYNs dropped, each retried after 1,
 * 3, 7 s...; 2-2.5 thousand at 4096).
 */
const LISTEN_BACKLOG = 65_535;

/** The error for a request node's parser refused (llhttp's error code) or that timed out. */
function protocolError(code: string | undefined): ApiError {
  if (code === "HPE_HEADER_OVERFLOW")
    return new ApiError(431, "headers_too_large", "the request's header fields are too large");
  if (code === "ERR_HTTP_REQUEST_TIMEOUT")
    return new ApiError(408, "request_timeout", "the request was not received in time");
  return new ApiError(400, "invalid_request", "the request is not valid HTTP/1.1");
}

/**
 * HSTS on a response node writes (the handler's, a 417): set before the handler runs, node merges it into whatever
 * writeHead is given. The one other way it is sent is {@link rawProblem}'s, for a socket written to directly.
 */
function markSecure(res: ServerResponse): void {
  res.setHeader("Strict-Transport-Security", HSTS);
}

/** A whole HTTP/1.1 response with a problem body, for a socket written to directly; the connection is closed after it. */
function rawProblem(error: ApiError, secure: boolean): Buffer {
  const p = renderProblem(error);
  const head = Object.entries(secure ? { ...p.headers, "Strict-Transport-Security": HSTS } : p.headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("");
  return Buffer.concat([
    Buffer.from(`HTTP/1.1 ${p.status} ${STATUS_CODES[p.status] ?? ""}\r\n${head}Connection: close\r\n\r\n`),
    p.body,
  ]);
}

/** The 503 of an address at `maxSendingPerAddress`, rendered once. */
const SENDING_FULL = renderProblem(
  new ApiError(
    503,
    "service_unavailable",
    "too many responses to this address have not been read yet; read them, then retry",
    { "Retry-After": "1" },
  ),
);

export interface RunningServer {
  /** An https.Server when started with `tls`. */
  server: Server | HttpsServer;
  /** Port actually bound (useful with port 0). */
  port: number;
  /** Stops accepting, lets in-flight requests finish, closes idle connections; resolves when all are closed. */
  close(): Promise<void>;
}

/** Starts an HTTP server for `handler` on host:port (HTTPS with `options.tls`). */
export async function startServer(
  handler: Handler,
  host: string,
  port: number,
  options: ServerOptions = {},
): Promise<RunningServer> {
  const o = { ...SERVER_DEFAULTS, ...options };
  // Keep-alive is decided here rather than by node:
  // - node's own maxRequestsPerSocket answers 503 to requests pipelined past the limit and keeps the connection;
  //   here the last answer says `Connection: close`, and whatever was pipelined after it is dropped with the
  //   connection (RFC 9112 section 9.6);
  // - with nothing listening for 'upgrade', node answers a request carrying `Upgrade` like any other, but llhttp
  //   keeps the message's upgrade flag and swallows the parse error of the next message on that connection (no
  //   400; the client waits for the keep-alive timeout), so such a connection is not kept alive.
  /** Counts the request on its connection; true when it came after the answer that closed the connection. */
  const closeAfter = (socket: Connection, req: IncomingMessage, res: ServerResponse): boolean => {
    const n = (socket[SERVED] ?? 0) + 1;
    socket[SERVED] = n;
    if (n > o.maxRequestsPerSocket) return true;
    if (n === o.maxRequestsPerSocket || req.headers.upgrade !== undefined) res.shouldKeepAlive = false;
    return false;
  };
  const secure = o.tls !== undefined;
  // `Keep-Alive: timeout=N` as node writes it for a server whose keepAliveTimeout is set (its `_keepAliveTimeout`,
  // read when the head is written): the server's is 0, so that node arms no timer per request (connections.ts).
  const advertise = (res: ServerResponse) => {
    (res as ServerResponse & { _keepAliveTimeout: number })._keepAliveTimeout = o.keepAliveTimeout;
  };
  // connectionsCheckingInterval: how often headersTimeout/requestTimeout are enforced (node's default, 30 s, lets
  // a slow client hold a connection for up to 40 s instead of 10).
  const httpOptions = {
    maxHeaderSize: o.maxHeaderSize,
    requestTimeout: o.requestTimeout,
    headersTimeout: o.headersTimeout,
    // node's per-request keep-alive timer is off: the sweep below closes idle connections (see KEEP_ALIVE_TICK_MS).
    keepAliveTimeout: 0,
    connectionsCheckingInterval: 1_000,
  };
  const sending = createSendLimits({
    maxPerAddress: o.maxSendingPerAddress,
    timeout: o.sendTimeout,
    largeBytes: o.sendTrackBytes,
    stall: o.sendStall,
  });
  /** The handler, then the send limits' count of what the connection was written (a look once it may be large). */
  const serve = (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket as Connection;
    sending.sent(socket, socket[ADDRESS]!, handler(req, res));
  };
  /** The cheap answer to an address whose clients do not read. */
  const refuse = (req: IncomingMessage, res: ServerResponse, address: string) => {
    res.writeHead(SENDING_FULL.status, SENDING_FULL.headers);
    res.end(req.method === "HEAD" ? undefined : SENDING_FULL.body);
    sending.written(req.socket, address);
  };
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket as Connection;
    if (closeAfter(socket, req, res)) return; // pipelined after our `Connection: close`: never answered, closed with the connection
    if (secure) markSecure(res);
    advertise(res);
    const address = socket[ADDRESS] ?? "";
    if (!sending.full(address)) return serve(req, res);
    // At the cap as last seen: decided after a fresh look at the kernel's account (some may have been read since).
    const decide = () => (sending.full(address) ? refuse(req, res, address) : serve(req, res));
    void sending.look().then(decide, decide);
  };
  // HTTPS: the same options and listeners on node's https.Server (a tls.Server whose decrypted connections go to
  // the same http code). headersTimeout only starts once the handshake is done, so the handshake gets as long
  // (node's default handshakeTimeout is 120 s, which a client that never finishes one could hold a connection for).
  const server = o.tls
    ? createHttpsServer(
        { ...httpOptions, ...TLS_SERVER_OPTIONS, cert: o.tls.cert, key: o.tls.key, handshakeTimeout: o.headersTimeout },
        listener,
      )
    : createServer(httpOptions, listener);
  // Every new connection prepared once, and the idle ones closed by a sweep instead of a timer per request.
  const connections = createConnections({ keepAliveTimeout: o.keepAliveTimeout, sendStall: o.sendStall, sending });
  // After node's own listener, before the first request is read; with TLS, on the socket requests arrive on.
  server.on(secure ? "secureConnection" : "connection", connections.prepare);
  server.maxConnections = o.maxConnections;
  answerEveryOtherCase(server, { secure, closeAfter, advertise, sending });
  const boundPort = await listenOn(server, host, port);
  return {
    server,
    port: boundPort,
    close: () =>
      new Promise<void>((resolveClose) => {
        server.close(() => {
          connections.stop();
          resolveClose();
        });
        // Event streams never finish by themselves: ended here, so that their clients reconnect elsewhere.
        handler.endStreams();
        server.closeIdleConnections();
      }),
  };
}

/**
 * What a server answers besides requests, each through the same rules as a request: an Expect other than
 * 100-continue, CONNECT, a failed TLS handshake, an idle connection's timeout, and a request node could not parse.
 */
function answerEveryOtherCase(
  server: Server | HttpsServer,
  {
    secure,
    closeAfter,
    advertise,
    sending,
  }: {
    secure: boolean;
    closeAfter: (socket: Connection, req: IncomingMessage, res: ServerResponse) => boolean;
    advertise: (res: ServerResponse) => void;
    sending: ReturnType<typeof createSendLimits>;
  },
): void {
  // Expect other than 100-continue: the 417 node would send, through the same keep-alive rule.
  server.on("checkExpectation", (req: IncomingMessage, res: ServerResponse) => {
    if (closeAfter(req.socket, req, res)) return;
    if (secure) markSecure(res);
    advertise(res);
    res.writeHead(417, { "Content-Length": "0" });
    res.end();
  });
  // CONNECT is a tunnel request: with no listener node drops the socket without an answer (a 502 behind a proxy).
  server.on("connect", (_req: IncomingMessage, socket: Socket) => {
    socket.end(
      rawProblem(
        new ApiError(405, "method_not_allowed", "CONNECT is not allowed; use GET or HEAD", { Allow: "GET, HEAD" }),
        secure,
      ),
    );
  });
  // A failed TLS handshake (plain HTTP on this port, a handshake not finished within handshakeTimeout) leaves no
  // channel to answer on: the connection is closed. node's https.Server passes the error on to 'clientError' below,
  // whose answer, written to a socket that never became secure, would otherwise keep the connection open forever.
  if (secure) server.prependListener("tlsClientError", (_err: Error, socket: Socket) => socket.destroy());
  // An idle keep-alive connection (past keepAliveTimeout) is closed as node would, unless the client has yet to
  // acknowledge what it was sent (send-limits.ts): then once it has, or by a reset at sendTimeout.
  server.on("timeout", (socket: Socket) => sending.closeIdle(socket));
  // A request node could not parse (or that came too slowly) is answered like every other error: a problem body.
  server.on("clientError", (err: NodeJS.ErrnoException, socket: Socket) => {
    if (!socket.writable) return socket.destroy();
    socket.end(rawProblem(protocolError(err.code), secure));
  });
}

/** Listens on host:port; resolves with the port bound (the one chosen for port 0). */
async function listenOn(server: Server | HttpsServer, host: string, port: number): Promise<number> {
  await new Promise<void>((resolveListen, reject) => {
    server.once("error", reject);
    server.listen({ port, host, backlog: LISTEN_BACKLOG }, () => {
      server.off("error", reject);
      resolveListen();
    });
  });
  const address = server.address();
  return typeof address === "object" && address ? address.port : port;
}
