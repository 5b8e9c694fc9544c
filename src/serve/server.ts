// The HTTP server around a handler: timeouts and limits for slow or broken clients, and a graceful close.
import { createServer } from "node:http";
import type { Server } from "node:http";
import type { Socket } from "node:net";
import type { Handler } from "./handler.ts";

export interface ServerOptions {
  /** Time a client has to send its request headers, ms. Default 10 000. */
  headersTimeout?: number;
  /** Time a client has to send its whole request, ms. Default 15 000. */
  requestTimeout?: number;
  /** Idle time before a keep-alive connection is closed, ms. Default 5 000. */
  keepAliveTimeout?: number;
  /** Requests one keep-alive connection may carry before it is closed. Default 1 000. */
  maxRequestsPerSocket?: number;
  /** Connections open at once; more are refused. Default 10 000. */
  maxConnections?: number;
  /** Largest request header block, bytes (larger is a 431). Default 16 384. */
  maxHeaderSize?: number;
}

export const SERVER_DEFAULTS: Required<ServerOptions> = {
  headersTimeout: 10_000,
  requestTimeout: 15_000,
  keepAliveTimeout: 5_000,
  maxRequestsPerSocket: 1_000,
  maxConnections: 10_000,
  maxHeaderSize: 16 * 1024,
};

export interface RunningServer {
  server: Server;
  /** Port actually bound (useful with port 0). */
  port: number;
  /** Stops accepting, lets in-flight requests finish, closes idle connections; resolves when all are closed. */
  close(): Promise<void>;
}

/** Starts an HTTP server for `handler` on host:port. */
export async function startServer(handler: Handler, host: string, port: number, options: ServerOptions = {}): Promise<RunningServer> {
  const o = { ...SERVER_DEFAULTS, ...options };
  const server = createServer({ maxHeaderSize: o.maxHeaderSize, requestTimeout: o.requestTimeout, headersTimeout: o.headersTimeout, keepAliveTimeout: o.keepAliveTimeout }, handler);
  server.maxRequestsPerSocket = o.maxRequestsPerSocket;
  server.maxConnections = o.maxConnections;
  server.on("clientError", (err: NodeJS.ErrnoException, socket: Socket) => {
    if (!socket.writable) return socket.destroy();
    const status = err.code === "HPE_HEADER_OVERFLOW" ? "431 Request Header Fields Too Large" : err.code === "ERR_HTTP_REQUEST_TIMEOUT" ? "408 Request Timeout" : "400 Bad Request";
    socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
  });
  await new Promise<void>((resolveListen, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolveListen();
    });
  });
  const address = server.address();
  const boundPort = typeof address === "object" && address ? address.port : port;
  return {
    server,
    port: boundPort,
    close: () =>
      new Promise<void>((resolveClose) => {
        server.close(() => resolveClose());
        server.closeIdleConnections();
      }),
  };
}
