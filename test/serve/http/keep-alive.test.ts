// Keep-alive without a timer per request (issue 33): node's keepAliveTimeout is off and the server's sweep closes
// idle connections instead. What a client sees must not change: `Keep-Alive: timeout=N` on every response, a
// connection in use never closed, an idle one closed once keepAliveTimeout has passed (not before), one that never
// sent a request left to headersTimeout, and keepAliveTimeout 0 meaning no timeout, as node has it.
import { once } from "node:events";
import { connect } from "node:net";
import type { Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer } from "../../../src/serve/http/server.ts";
import type { RunningServer, ServerOptions } from "../../../src/serve/http/server.ts";
import { startTestApi, withKey } from "../../helpers/fixture.ts";
import type { TestApi } from "../../helpers/fixture.ts";

let api: TestApi;
const servers: RunningServer[] = [];
const sockets: Socket[] = [];

beforeAll(async () => {
  api = await startTestApi();
}, 60_000);

afterAll(async () => {
  for (const s of sockets) s.destroy();
  await Promise.all(servers.map((s) => s.close()));
  await api.close();
});

async function serve(options: ServerOptions): Promise<number> {
  const server = await startServer(api.handler, "127.0.0.1", 0, options);
  servers.push(server);
  return server.port;
}

/** A raw keep-alive connection: `ask` sends a GET and resolves with the response head once its body has arrived. */
async function connection(port: number) {
  const socket = connect({ host: "127.0.0.1", port });
  sockets.push(socket);
  await once(socket, "connect");
  let received = "";
  let closedAt = 0;
  socket.on("data", (c: Buffer) => (received += c.toString("latin1")));
  socket.on("close", () => (closedAt = Date.now()));
  return {
    get closedAt() {
      return closedAt;
    },
    async ask(path: string): Promise<string> {
      received = "";
      socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
      for (;;) {
        const end = received.indexOf("\r\n\r\n");
        const length = /\r\ncontent-length: (\d+)/i.exec(received)?.[1];
        if (end >= 0 && length !== undefined && received.length >= end + 4 + Number(length))
          return received.slice(0, end + 2);
        await once(socket, "data");
      }
    },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("keep-alive", () => {
  it("says Keep-Alive: timeout=N on every response, as node does with its own timer", async () => {
    const port = await serve({ keepAliveTimeout: 7_000 });
    const c = await connection(port);
    for (const path of [withKey(api, "/v1/sales/active.json"), "/healthz", "/v1/nothing"]) {
      const head = await c.ask(path);
      expect([path, /\r\nConnection: keep-alive\r\n/.test(head)]).toEqual([path, true]);
      expect([path, /\r\nKeep-Alive: timeout=7\r\n/.test(head)]).toEqual([path, true]);
    }
  });

  it("closes an idle connection once keepAliveTimeout (and node's 1 s margin) has passed, not before", async () => {
    const port = await serve({ keepAliveTimeout: 400 });
    const c = await connection(port);
    await c.ask("/healthz");
    const answered = Date.now();
    await sleep(300);
    expect(c.closedAt).toBe(0);
    while (c.closedAt === 0) await sleep(20);
    // node's own timer closed it at keepAliveTimeout + 1 s; the sweep between keepAliveTimeout and that + a tick.
    expect(c.closedAt - answered).toBeGreaterThanOrEqual(400);
    expect(c.closedAt - answered).toBeLessThan(1_400 + 250);
  });

  it("never closes a connection that keeps sending requests within keepAliveTimeout", async () => {
    const port = await serve({ keepAliveTimeout: 300 });
    const c = await connection(port);
    const until = Date.now() + 2_500;
    let answered = 0;
    while (Date.now() < until) {
      expect(await c.ask("/healthz")).toMatch(/^HTTP\/1\.1 200 /);
      answered++;
      await sleep(150);
    }
    expect(c.closedAt).toBe(0);
    expect(answered).toBeGreaterThan(10);
  });

  it("leaves a connection that never sent a request to headersTimeout, and keepAliveTimeout 0 closes nothing", async () => {
    const silent = await connection(await serve({ keepAliveTimeout: 100 }));
    const noTimeout = await connection(await serve({ keepAliveTimeout: 0 }));
    await noTimeout.ask("/healthz");
    await sleep(1_200); // past keepAliveTimeout + node's margin for the first server
    expect([silent.closedAt, noTimeout.closedAt]).toEqual([0, 0]);
    expect(await noTimeout.ask("/healthz")).toMatch(/^HTTP\/1\.1 200 /);
  });
});
