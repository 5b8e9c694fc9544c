// A 200's head written by us rather than by node's writeHead, on the request path's common case. node checks every
// header name and value again on every response (a regular expression each, and a lower-casing of the name): for a
// representation's dozen headers, all made by this server, that is about 1 us of a 20-30 us request (a bare server
// sending 11: 18.4 against 19.4 us). Here the head is joined as node would join it, and handed to node's
// ServerResponse where writeHead leaves its own; node still does the rest (writing it with the body, keep-alive,
// pipelining). Any case off the common one goes to writeHead.
import { IncomingMessage, ServerResponse } from "node:http";
import { Socket } from "node:net";

/** The fields of node's ServerResponse (since node 0.x; node 20-24 alike) that writeHead sets or reads for the head. */
interface NodeResponse {
  _header: string | null;
  _headerSent: boolean;
  _contentLength: number | null;
  _hasBody: boolean;
  _defaultKeepAlive: boolean;
  _removedConnection: boolean;
  _keepAliveTimeout: number;
  _maxRequestsPerSocket: number;
  _expect_continue: boolean;
  shouldKeepAlive: boolean;
  maxRequestsOnConnectionReached: boolean;
  sendDate: boolean;
  chunkedEncoding: boolean;
}

/** node's symbol for the headers set with setHeader (HSTS under TLS): a response with any goes to writeHead. */
let outHeaders: symbol | undefined;

/**
 * Whether this node's ServerResponse has the fields above as node 20-24 leave them on a fresh response to a GET (the
 * server sets `_keepAliveTimeout` and `_maxRequestsPerSocket` on each response it makes): if
 * a later node differs, every head goes to writeHead (slower, never wrong). Tested: test/serve/bodies/response-head.test.ts.
 */
export const ownHeadSupported: boolean = (() => {
  const req = new IncomingMessage(new Socket());
  req.method = "GET";
  req.httpVersionMajor = 1;
  req.httpVersionMinor = 1;
  const res = new ServerResponse(req) as unknown as NodeResponse & Record<symbol, unknown>;
  outHeaders = Object.getOwnPropertySymbols(res).find((s) => s.description === "kOutHeaders");
  return (
    outHeaders !== undefined &&
    res[outHeaders] === null &&
    res._header === null &&
    res._headerSent === false &&
    res._hasBody === true &&
    res._defaultKeepAlive === true &&
    res._removedConnection === false &&
    res._expect_continue === false &&
    res.shouldKeepAlive === true &&
    res.maxRequestsOnConnectionReached === false &&
    res.sendDate === true &&
    res.chunkedEncoding === false &&
    "_contentLength" in res &&
    "_keepAliveTimeout" in res
  );
})();

/** `Date: <IMF-fixdate>` as node writes it, made once a second. */
let dateLine = "";
let dateUntil = 0;

/** `Keep-Alive: timeout=N[, max=M]` for the last (timeout, max) seen: one server's are the same on every response. */
let keepAliveLine = "";
let keepAliveFor = -1;
let keepAliveMax = -1;

/**
 * Writes `200 OK` with `headers` (flat name, value pairs, made by this server: valid, with Content-Length among them
 * and no Connection, Date or Keep-Alive) on `res`, exactly as `res.writeHead(200, headers)` would.
 */
export function writeOk(res: ServerResponse, headers: string[], contentLength: number): void {
  const r = res as unknown as NodeResponse & Record<symbol, unknown>;
  if (
    !ownHeadSupported ||
    r._header !== null ||
    r[outHeaders!] !== null ||
    !r.shouldKeepAlive ||
    r.maxRequestsOnConnectionReached ||
    !r._defaultKeepAlive ||
    r._removedConnection ||
    r._expect_continue ||
    !r.sendDate
  ) {
    res.writeHead(200, headers);
    return;
  }
  let head = "HTTP/1.1 200 OK\r\n";
  for (let i = 0; i < headers.length; i += 2) head += headers[i] + ": " + headers[i + 1] + "\r\n";
  const now = Date.now();
  if (now >= dateUntil || now < dateUntil - 1000) {
    dateLine = "Date: " + new Date(now).toUTCString() + "\r\n";
    dateUntil = now - (now % 1000) + 1000;
  }
  head += dateLine + "Connection: keep-alive\r\n";
  if (r._keepAliveTimeout) {
    if (r._keepAliveTimeout !== keepAliveFor || r._maxRequestsPerSocket !== keepAliveMax) {
      keepAliveFor = r._keepAliveTimeout;
      keepAliveMax = r._maxRequestsPerSocket;
      const max = ~~keepAliveMax > 0 ? `, max=${keepAliveMax}` : "";
      keepAliveLine = `Keep-Alive: timeout=${Math.floor(keepAliveFor / 1000)}${max}\r\n`;
    }
    head += keepAliveLine;
  }
  res.statusCode = 200;
  res.statusMessage = "OK";
  r._contentLength = contentLength;
  r._header = head + "\r\n";
  r._headerSent = false;
}
