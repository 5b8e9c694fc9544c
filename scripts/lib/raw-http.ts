// A byte-exact HTTP/1.1 client over node:net, for requests fetch would normalise or refuse (dot segments, raw bytes, huge headers).
import { connect } from "node:net";
import type { Socket } from "node:net";

export interface RawResponse {
  status: number;
  /** Header names lower-cased; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: Buffer;
  /** The whole response as received: status line, headers and body. */
  raw: Buffer;
}

/** Thrown when the connection ends (or times out) before a complete response arrived. */
export class NoResponseError extends Error {
  readonly received: Buffer;
  constructor(message: string, received: Buffer) {
    super(message);
    this.name = "NoResponseError";
    this.received = received;
  }
}

/**
 * Parses one response at the start of `buf`. Returns it and the bytes it used, or null while incomplete.
 * Interim 1xx responses are skipped. `ended`: the peer closed, so a body without a length ends here.
 */
function parseResponse(buf: Buffer, isHead: boolean, ended = false): { response: RawResponse; used: number } | null {
  let start = 0;
  for (;;) {
    const end = buf.indexOf("\r\n\r\n", start);
    if (end < 0) return null;
    const head = buf.subarray(start, end).toString("latin1").split("\r\n");
    const m = /^HTTP\/1\.[01] (\d{3})/.exec(head[0] ?? "");
    if (!m) throw new Error(`not an HTTP response: ${JSON.stringify(head[0])}`);
    const status = Number(m[1]);
    const headers: Record<string, string> = {};
    for (const line of head.slice(1)) {
      const colon = line.indexOf(":");
      if (colon <= 0) continue;
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
    }
    const bodyStart = end + 4;
    if (status >= 100 && status < 200 && status !== 101) {
      start = bodyStart;
      continue;
    }
    const done = (bodyEnd: number, body: Buffer) => ({
      response: { status, headers, body, raw: buf.subarray(start, bodyEnd) },
      used: bodyEnd,
    });
    if (isHead || status === 204 || status === 304 || status === 101) return done(bodyStart, Buffer.alloc(0));
    const length = headers["content-length"];
    if (length !== undefined) {
      const n = Number(length);
      if (buf.length < bodyStart + n) return null;
      return done(bodyStart + n, buf.subarray(bodyStart, bodyStart + n));
    }
    if (/chunked/i.test(headers["transfer-encoding"] ?? "")) {
      const parts: Buffer[] = [];
      let at = bodyStart;
      for (;;) {
        const eol = buf.indexOf("\r\n", at);
        if (eol < 0) return null;
        const size = parseInt(buf.subarray(at, eol).toString("latin1"), 16);
        if (Number.isNaN(size)) throw new Error("bad chunk size");
        at = eol + 2;
        if (size === 0) {
          const trailerEnd = buf.indexOf("\r\n", at);
          if (trailerEnd < 0) return null;
          return done(trailerEnd + 2, Buffer.concat(parts));
        }
        if (buf.length < at + size + 2) return null;
        parts.push(buf.subarray(at, at + size));
        at += size + 2;
      }
    }
    return ended ? done(buf.length, buf.subarray(bodyStart)) : null;
  }
}

/** Builds a request: `target` and header values are written byte for byte (latin1), so any byte can be sent. */
export function buildRequest(
  method: string,
  target: string,
  headers: ReadonlyArray<readonly [string, string]> = [],
  body?: Buffer,
): Buffer {
  let head = `${method} ${target} HTTP/1.1\r\n`;
  for (const [name, value] of headers) head += `${name}: ${value}\r\n`;
  head += "\r\n";
  const bytes = Buffer.from(head, "latin1");
  return body ? Buffer.concat([bytes, body]) : bytes;
}

/** Opens a connection, writes `request` as is, and resolves with the first complete response (or rejects with NoResponseError). */
export function rawRequest(
  port: number,
  request: Buffer | string,
  options: { host?: string; isHead?: boolean; timeoutMs?: number } = {},
): Promise<RawResponse> {
  const bytes = typeof request === "string" ? Buffer.from(request, "latin1") : request;
  const isHead = options.isHead ?? bytes.subarray(0, 5).toString("latin1") === "HEAD ";
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: options.host ?? "127.0.0.1" });
    let buf: Buffer = Buffer.alloc(0);
    let settled = false;
    const finish = (ended: boolean) => {
      if (settled) return;
      let parsed: ReturnType<typeof parseResponse>;
      try {
        parsed = parseResponse(buf, isHead, ended);
      } catch (err) {
        settled = true;
        socket.destroy();
        reject(err instanceof Error ? err : new Error(String(err)));
        return;
      }
      if (parsed) {
        settled = true;
        socket.destroy();
        resolve(parsed.response);
      } else if (ended) {
        settled = true;
        socket.destroy();
        reject(new NoResponseError("connection closed before a complete response", buf));
      }
    };
    socket.setTimeout(options.timeoutMs ?? 10_000, () => {
      if (settled) return;
      settled = true;
      socket.destroy();
      reject(new NoResponseError("timed out waiting for a response", buf));
    });
    socket.on("data", (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      finish(false);
    });
    socket.on("end", () => finish(true));
    socket.on("close", () => finish(true));
    // The server may answer and close before it has read everything we sent (a 431, say): that is not a failure.
    socket.on("error", () => finish(true));
    socket.write(bytes);
  });
}

/**
 * Writes `request` (one or several pipelined requests) on a new connection and collects every response until
 * the server closes the connection or stays silent for `idleMs`. `heads` says which responses answer a HEAD.
 */
export function rawExchange(
  port: number,
  request: Buffer | string,
  options: { host?: string; idleMs?: number; heads?: readonly boolean[] } = {},
): Promise<{ responses: RawResponse[]; closedByServer: boolean }> {
  const bytes = typeof request === "string" ? Buffer.from(request, "latin1") : request;
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: options.host ?? "127.0.0.1" });
    let buf: Buffer = Buffer.alloc(0);
    const responses: RawResponse[] = [];
    let settled = false;
    const take = (ended: boolean) => {
      for (;;) {
        const parsed = parseResponse(buf, options.heads?.[responses.length] ?? false, ended);
        if (!parsed) return;
        responses.push(parsed.response);
        buf = buf.subarray(parsed.used);
        if (ended && buf.length === 0) return;
      }
    };
    const finish = (closedByServer: boolean) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      try {
        take(closedByServer);
      } catch (err) {
        reject(err instanceof Error ? err : new Error(String(err)));
        return;
      }
      resolve({ responses, closedByServer });
    };
    socket.setTimeout(options.idleMs ?? 2000, () => finish(false));
    socket.on("data", (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      try {
        take(false);
      } catch (err) {
        settled = true;
        socket.destroy();
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    });
    socket.on("end", () => finish(true));
    socket.on("close", () => finish(true));
    socket.on("error", () => finish(true));
    socket.write(bytes);
  });
}

/**
 * One keep-alive connection that sends requests one after another. `send` resolves with the response, or
 * rejects with NoResponseError when the connection closes first; after a `Connection: close` response or
 * any close, `closed` is true and the caller opens a new connection.
 */
export class KeepAliveConnection {
  readonly socket: Socket;
  closed = false;
  /** Requests sent on this connection so far, and when it was opened (for diagnostics). */
  requests = 0;
  readonly openedAt = Date.now();
  /** Notes on the last few exchanges, for diagnostics. */
  readonly history: string[] = [];
  /** The last socket error, if any (ECONNRESET, EPIPE...). */
  lastError: string | null = null;
  private buf: Buffer = Buffer.alloc(0);
  /** What has arrived, not yet joined into `buf` (which is its first element once joined), and its length. */
  private chunks: Buffer[] = [];
  private received = 0;
  /** Bytes the pending response is known to need (head and Content-Length) before it can be parsed. */
  private needed = 0;
  private pending: { isHead: boolean; resolve: (r: RawResponse) => void; reject: (e: Error) => void } | null = null;
  private ready: Promise<void>;

  constructor(port: number, host = "127.0.0.1", localAddress?: string) {
    this.socket = connect({ port, host, ...(localAddress ? { localAddress } : {}) });
    this.socket.setNoDelay(true);
    this.ready = new Promise((resolve, reject) => {
      this.socket.once("connect", () => resolve());
      this.socket.once("error", reject);
    });
    this.ready.catch(() => undefined);
    this.socket.on("data", (chunk: Buffer) => {
      // A large body comes in many chunks: they are joined once it is all here (its length known from the head),
      // not chunk by chunk, which made receiving a 6 MB body cost the client more than the server.
      this.chunks.push(chunk);
      this.received += chunk.length;
      if (this.received < this.needed) return;
      this.join();
      this.drain(false);
    });
    const onEnd = () => {
      this.closed = true;
      this.drain(true);
    };
    this.socket.on("end", onEnd);
    this.socket.on("close", onEnd);
    this.socket.on("error", (err: NodeJS.ErrnoException) => {
      this.lastError = err.code ?? err.message;
      onEnd();
    });
  }

  private join(): void {
    if (this.chunks.length > 1) this.chunks = [Buffer.concat(this.chunks)];
    this.buf = this.chunks[0] ?? Buffer.alloc(0);
  }

  private drain(ended: boolean): void {
    if (ended) this.join();
    const p = this.pending;
    if (!p) return;
    let parsed: ReturnType<typeof parseResponse>;
    try {
      parsed = parseResponse(this.buf, p.isHead, ended);
    } catch (err) {
      this.pending = null;
      this.close();
      p.reject(err as Error);
      return;
    }
    if (parsed) {
      this.pending = null;
      this.buf = this.buf.subarray(parsed.used);
      this.chunks = [this.buf];
      this.received = this.buf.length;
      this.needed = 0;
      if (/close/i.test(parsed.response.headers["connection"] ?? "")) this.close();
      p.resolve(parsed.response);
    } else if (ended) {
      this.pending = null;
      p.reject(new NoResponseError("connection closed before a complete response", this.buf));
    } else {
      const headEnd = this.buf.indexOf("\r\n\r\n");
      const length =
        headEnd < 0 ? null : /\r\ncontent-length:\s*(\d+)/i.exec(this.buf.subarray(0, headEnd).toString("latin1"));
      if (length && !p.isHead && !/^HTTP\/1\.[01] (1|204|304)/.test(this.buf.subarray(0, 12).toString("latin1")))
        this.needed = headEnd + 4 + Number(length[1]);
    }
  }

  /** Writes one complete request and waits for its response. */
  async send(request: Buffer, isHead: boolean): Promise<RawResponse> {
    await this.ready;
    if (this.closed) throw new NoResponseError("connection already closed", Buffer.alloc(0));
    if (this.pending) throw new Error("one request at a time");
    this.requests++;
    return new Promise((resolve, reject) => {
      this.pending = { isHead, resolve, reject };
      this.socket.write(request, (err) => {
        if (err) this.drain(true);
      });
    });
  }

  close(): void {
    this.closed = true;
    this.socket.destroy();
  }
}
