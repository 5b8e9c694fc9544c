// A fake Redis for tests: a TCP server on a free loopback port that speaks enough RESP2 for ioredis (it refuses
// HELLO, so ioredis falls back to RESP2) and answers every script call (EVALSHA, EVAL) with what the test chooses,
// well-formed or not; it records the commands it was sent.
import { createHash } from "node:crypto";
import { once } from "node:events";
import { createServer } from "node:net";
import type { Socket } from "node:net";

/**
 * A reply: a number is an integer reply (`:`), a string a bulk string, null a nil bulk string, an Error an error
 * reply, an array an array reply; `{ simple }` a status reply (`+`), `{ raw }` bytes sent as they are.
 */
export type Reply = number | string | null | Error | Reply[] | { simple: string } | { raw: string };

/** A script call (EVALSHA or EVAL): the first key, the arguments after the keys, and its number (0, 1, ...). */
export interface ScriptCall {
  n: number;
  key: string;
  argv: string[];
}

export interface FakeRedis {
  port: number;
  url: string;
  /** Every command received, in order, as strings (the first ones are the client's handshake). */
  readonly commands: string[][];
  /** Connections accepted so far. */
  readonly connections: number;
  /** Script calls answered so far. */
  readonly scriptCalls: number;
  close(): Promise<void>;
}

/** Encodes a reply in RESP2 (what a test's bad replies are made of). */
function encodeReply(reply: Reply): string {
  if (reply === null) return "$-1\r\n";
  if (typeof reply === "number") return `:${reply}\r\n`;
  if (typeof reply === "string") return `$${Buffer.byteLength(reply)}\r\n${reply}\r\n`;
  if (reply instanceof Error) return `-${reply.message}\r\n`;
  if (Array.isArray(reply)) return `*${reply.length}\r\n${reply.map(encodeReply).join("")}`;
  if ("simple" in reply) return `+${reply.simple}\r\n`;
  return reply.raw;
}

/**
 * Reads the commands complete in `buf` (arrays of bulk strings, as clients send them; an inline command as words):
 * the commands, and the bytes not used yet.
 */
function readCommands(buf: Buffer): { commands: string[][]; rest: Buffer } {
  const commands: string[][] = [];
  let at = 0;
  const line = (from: number) => {
    const end = buf.indexOf("\r\n", from);
    return end < 0 ? null : { text: buf.toString("latin1", from, end), next: end + 2 };
  };
  for (;;) {
    const head = line(at);
    if (!head) break;
    if (!head.text.startsWith("*")) {
      commands.push(head.text.split(" ").filter(Boolean));
      at = head.next;
      continue;
    }
    const count = Number(head.text.slice(1));
    const args: string[] = [];
    let pos = head.next;
    let complete = true;
    for (let i = 0; i < count; i++) {
      const size = line(pos);
      if (!size) {
        complete = false;
        break;
      }
      const length = Number(size.text.slice(1));
      if (buf.length < size.next + length + 2) {
        complete = false;
        break;
      }
      args.push(buf.toString("utf8", size.next, size.next + length));
      pos = size.next + length + 2;
    }
    if (!complete) break;
    commands.push(args);
    at = pos;
  }
  return { commands, rest: buf.subarray(at) };
}

const INFO = "# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\n# Persistence\r\nloading:0\r\n";

/** Starts a fake Redis on 127.0.0.1 (a free port) whose script calls `script` answers. */
export async function startFakeRedis(script: (call: ScriptCall) => Reply): Promise<FakeRedis> {
  const commands: string[][] = [];
  const scripts = new Set<string>();
  const sockets = new Set<Socket>();
  let connections = 0;
  let scriptCalls = 0;
  /** The reply to a command; undefined for QUIT (answered, then the connection is closed). */
  const answer = (args: string[]): Reply | undefined => {
    const name = (args[0] ?? "").toUpperCase();
    const sub = (args[1] ?? "").toUpperCase();
    switch (name) {
      case "HELLO":
        return new Error("ERR unknown command 'HELLO', with args beginning with: '3'");
      case "CLIENT":
      case "SELECT":
      case "AUTH":
      case "READONLY":
        return { simple: "OK" };
      case "PING":
        return { simple: "PONG" };
      case "INFO":
        return INFO;
      case "QUIT":
        return undefined;
      case "SCRIPT":
        if (sub === "LOAD") {
          const sha = createHash("sha1")
            .update(args[2] ?? "")
            .digest("hex");
          scripts.add(sha);
          return sha;
        }
        return new Error(`ERR unknown subcommand '${args[1]}'`);
      case "EVALSHA":
      case "EVAL": {
        const body = args[1] ?? "";
        const sha = name === "EVAL" ? createHash("sha1").update(body).digest("hex") : body;
        if (name === "EVAL") scripts.add(sha);
        else if (!scripts.has(sha)) return new Error("NOSCRIPT No matching script. Please use EVAL.");
        const keys = Number(args[2]);
        return script({ n: scriptCalls++, key: args[3] ?? "", argv: args.slice(3 + keys) });
      }
      default:
        return new Error(`ERR unknown command '${args[0]}'`);
    }
  };
  const server = createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
    let pending: Buffer = Buffer.alloc(0);
    socket.on("data", (chunk: Buffer) => {
      const { commands: received, rest } = readCommands(Buffer.concat([pending, chunk]));
      pending = rest;
      for (const args of received) {
        commands.push(args);
        const reply = answer(args);
        if (reply === undefined) {
          socket.end(encodeReply({ simple: "OK" }));
          return;
        }
        socket.write(encodeReply(reply));
      }
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    commands,
    get connections() {
      return connections;
    },
    get scriptCalls() {
      return scriptCalls;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      server.close();
      await once(server, "close");
    },
  };
}
