// The head writeOk writes is byte for byte the one node's writeHead writes, on a real node:http server read over a raw
// connection: keep-alive (advertised or not, with a request limit), pipelining, HEAD, HTTP/1.0, `Connection: close`,
// and a header set before (the cases that go to writeHead).
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { connect } from "node:net";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ownHeadSupported, writeOk } from "../../../src/serve/bodies/response-head.ts";

const BODY = Buffer.from('{"id":"1","name":"Linen shirt"}');
const HEADERS = [
  "ETag",
  '"abc-br"',
  "Cache-Control",
  "public, max-age=60",
  "Vary",
  "Accept-Encoding, Authorization, X-Api-Key",
  "Content-Type",
  "application/json; charset=utf-8",
  "Content-Length",
  String(BODY.length),
];

/** A server answering /own with writeOk and anything else with writeHead, the same headers and body. */
async function start(options: { keepAliveTimeout?: number; maxRequestsPerSocket?: number } = {}): Promise<Server> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.headers["x-set-before"]) res.setHeader("Strict-Transport-Security", "max-age=63072000");
    if (req.url === "/own") writeOk(res, HEADERS, BODY.length);
    else res.writeHead(200, HEADERS);
    res.end(req.method === "HEAD" ? undefined : BODY);
  });
  if (options.keepAliveTimeout !== undefined) server.keepAliveTimeout = options.keepAliveTimeout;
  if (options.maxRequestsPerSocket !== undefined) server.maxRequestsPerSocket = options.maxRequestsPerSocket;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  servers.push(server);
  return server;
}

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((resolve) => s.close(resolve));
  }
});

/** What one connection was sent, and whether the server closed it after `responses` answers. */
interface Exchange {
  text: string;
  closed: boolean;
}

/**
 * Writes `requests` (one write: pipelined) and reads until `responses` whole answers have come (a HEAD's has no body),
 * then until the server closes the connection, or, if it keeps it, until one more request is answered.
 */
function exchange(server: Server, requests: string, heads: boolean[]): Promise<Exchange> {
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port });
    let data = "";
    let probed = false;
    const complete = (text: string, n: number): number | null => {
      let at = 0;
      for (let i = 0; i < n; i++) {
        const end = text.indexOf("\r\n\r\n", at);
        if (end < 0) return null;
        const length = heads[i] ? 0 : Number(/content-length: (\d+)/i.exec(text.slice(at, end))![1]);
        if (text.length < end + 4 + length) return null;
        at = end + 4 + length;
      }
      return at;
    };
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => {
      data += chunk;
      const at = complete(data, heads.length);
      // Kept open: one more request is answered on the same connection.
      if (at !== null && !probed) {
        probed = true;
        socket.write("HEAD /probe HTTP/1.1\r\nHost: x\r\n\r\n");
      } else if (probed && data.indexOf("\r\n\r\n", at ?? 0) > 0) {
        socket.destroy();
        resolve({ text: data.slice(0, at!), closed: false });
      }
    });
    socket.on("end", () => resolve({ text: data, closed: true }));
    socket.on("error", reject);
    socket.write(requests);
  });
}

/** Each Date an IMF-fixdate of about now (node's form: toUTCString), then blanked so that two exchanges compare. */
function blankDates(text: string): string {
  return text.replace(/\r\nDate: ([^\r]*)/g, (_, value: string) => {
    expect(new Date(value).toUTCString()).toBe(value);
    expect(Math.abs(Date.parse(value) - Date.now())).toBeLessThan(5_000);
    return "\r\nDate: -";
  });
}

/** The same requests sent to /own and to /node: the same bytes and the same end of the connection. */
async function same(server: Server, requests: (path: string) => string, heads: boolean[]): Promise<Exchange> {
  const own = await exchange(server, requests("/own"), heads);
  const node = await exchange(server, requests("/node"), heads);
  own.text = blankDates(own.text);
  node.text = blankDates(node.text);
  expect(own).toEqual(node);
  return own;
}

const get = (path: string, extra = "") => `GET ${path} HTTP/1.1\r\nHost: x\r\n${extra}\r\n`;

describe("writeOk", () => {
  it("is supported by this node (else every head would go to writeHead: slower)", () => {
    expect(ownHeadSupported).toBe(true);
  });

  it("writes node's head for keep-alive requests, pipelined, GET and HEAD, with the advertised timeout", async () => {
    const server = await start({ keepAliveTimeout: 5_000 });
    const requests = (p: string) => get(p) + `HEAD ${p} HTTP/1.1\r\nHost: x\r\n\r\n` + get(p);
    const got = await same(server, requests, [false, true, false]);
    expect(got.closed).toBe(false);
    expect(got.text.match(/HTTP\/1\.1 200 OK\r\n/g)).toHaveLength(3);
    expect(got.text).toContain("\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\n\r\n");
    expect(got.text).toContain(`\r\n\r\n${BODY.toString()}`);
  });

  it("writes no Keep-Alive line when the server advertises no timeout", async () => {
    const server = await start({ keepAliveTimeout: 0 });
    const got = await same(server, (p) => get(p), [false]);
    expect(got.closed).toBe(false);
    expect(got.text).not.toContain("Keep-Alive:");
  });

  it("says the request limit, and Connection: close at it (writeHead's case)", async () => {
    const server = await start({ keepAliveTimeout: 5_000, maxRequestsPerSocket: 2 });
    const got = await same(server, (p) => get(p) + get(p), [false, false]);
    expect(got.text).toContain("Keep-Alive: timeout=5, max=2\r\n");
    expect(got.text).toContain("Connection: close\r\n");
  });

  it.each([
    ["HTTP/1.0", (p: string) => `GET ${p} HTTP/1.0\r\n\r\n`],
    ["Connection: close", (p: string) => get(p, "Connection: close\r\n")],
  ])("closes as node does for %s (writeHead's case)", async (_, requests) => {
    const server = await start({ keepAliveTimeout: 5_000 });
    const got = await same(server, requests, [false]);
    expect(got.closed).toBe(true);
    expect(got.text).toContain("Connection: close\r\n");
  });

  it("keeps a header set before writing (writeHead's case)", async () => {
    const server = await start({ keepAliveTimeout: 5_000 });
    const got = await same(server, (p) => get(p, "X-Set-Before: 1\r\n"), [false]);
    expect(got.text).toContain("Strict-Transport-Security: max-age=63072000\r\n");
  });
});
