// The request log line is exactly JSON.stringify of its entry (it is built by hand because every request pays for it),
// as a string and as the bytes the log buffer writes; the Redis address the server logs carries no credentials.
import { describe, expect, it } from "vitest";
import { AS_STRING, createLogBuffer, NO_ROOM, RequestLineEncoder, requestLine } from "../../src/cli/log-buffer.ts";
import type { LogSink } from "../../src/cli/log-buffer.ts";
import { redisAddress } from "../../src/cli/run-server.ts";
import type { RequestLog } from "../../src/serve/handler.ts";

const base: RequestLog = {
  time: "2026-11-23T18:00:00.123Z",
  method: "GET",
  path: "/v1/products/1/detail.json",
  status: 200,
  bytes: 703,
  ms: 0.123,
};

const cases: [string, RequestLog][] = [
  ["a served request with a key", { ...base, key: "demo" }],
  ["no key", base],
  ["quotes, backslashes and control characters in the path", { ...base, path: '/v1/"a"\\b\n\t\u0000\u007f' }],
  ["non-ASCII and a lone surrogate", { ...base, path: "/v1/caf\u00e9/\ud83d\ude00/\ud800", key: 'k"1' }],
  ["an odd method and a 0 ms request", { ...base, method: "PROPFIND", status: 405, bytes: 0, ms: 0 }],
  ["a very small and a large duration", { ...base, ms: 1e-7, bytes: 123456789 }],
  ["a slow request", { ...base, ms: 12345.678, status: 503 }],
  ["durations with one, two and three decimals", { ...base, ms: 0.5 }],
  ["ten microseconds", { ...base, ms: 0.01 }],
  ["a whole number of milliseconds", { ...base, ms: 20 }],
  ["a duration with more than three decimals", { ...base, ms: 0.0125 }],
  ["a byte count past 2^31", { ...base, bytes: 2 ** 31 + 5 }],
  ["a fractional byte count", { ...base, bytes: 1.5 }],
  ["minus zero", { ...base, ms: -0 }],
];

/** Collects what a log buffer writes. */
function collect(): LogSink & { text(): string; chunks: number } {
  const parts: Buffer[] = [];
  return {
    write(chunk) {
      parts.push(Buffer.from(chunk));
    },
    drained: () => Promise.resolve(),
    text: () => Buffer.concat(parts).toString("utf8"),
    get chunks() {
      return parts.length;
    },
  };
}

describe("requestLine", () => {
  it.each(cases)("%s", (_, entry) => {
    expect(requestLine(entry)).toBe(JSON.stringify(entry) + "\n");
  });
});

describe("RequestLineEncoder: the same line, as bytes", () => {
  it.each(cases)("%s", (_, entry) => {
    const buf = new Uint8Array(1024);
    const end = new RequestLineEncoder().encode(entry, buf, 10, buf.length);
    const expected = JSON.stringify(entry) + "\n";
    if (end === AS_STRING) {
      // Left to the string only for numbers a handler never logs.
      expect(
        Number.isInteger(entry.bytes) && entry.bytes < 2 ** 31 && Math.round(entry.ms * 1000) / 1000 === entry.ms,
      ).toBe(false);
      return;
    }
    expect(Buffer.from(buf.subarray(10, end)).toString("utf8")).toBe(expected);
  });

  it("writes every duration the handler logs (whole microseconds up to a minute) as JSON does", () => {
    const encoder = new RequestLineEncoder();
    const buf = new Uint8Array(512);
    for (let us = 0; us <= 60_000_000; us += us < 100_000 ? 1 : 997) {
      const entry = { ...base, ms: Math.round((us / 1000) * 1000) / 1000 };
      const end = encoder.encode(entry, buf, 0, buf.length);
      const line = Buffer.from(buf.subarray(0, end)).toString("latin1");
      if (line !== JSON.stringify(entry) + "\n") expect(line).toBe(JSON.stringify(entry) + "\n");
    }
  });

  it("keeps the parts it remembers apart: a new time, method, path or key name changes the line", () => {
    const encoder = new RequestLineEncoder();
    const buf = new Uint8Array(512);
    const entries: RequestLog[] = [
      base,
      { ...base, time: "2026-11-23T18:00:00.124Z" },
      { ...base, time: "2026-11-23T18:00:00.124Z", method: "HEAD" },
      { ...base, path: "/v1/products/2/detail.json", key: "a" },
      { ...base, path: "/v1/products/2/detail.json", key: "b" },
      base,
    ];
    for (const e of entries) {
      const end = encoder.encode(e, buf, 0, buf.length);
      expect(Buffer.from(buf.subarray(0, end)).toString("utf8")).toBe(JSON.stringify(e) + "\n");
    }
  });

  it("writes nothing when the line does not fit", () => {
    const buf = new Uint8Array(100).fill(7);
    expect(new RequestLineEncoder().encode({ ...base, key: "demo" }, buf, 50, buf.length)).toBe(NO_ROOM);
    expect(buf.every((b) => b === 7)).toBe(true);
  });
});

describe("createLogBuffer", () => {
  it("writes the lines of many requests, in order, in batches no larger than its size", async () => {
    const sink = collect();
    const logs = createLogBuffer(sink, { maxBytes: 4096, flushMs: 60_000 });
    const entries: RequestLog[] = [];
    for (let i = 0; i < 1000; i++) {
      const e = {
        ...base,
        path: `/v1/products/${i % 37}/detail.json`,
        bytes: i,
        ms: i / 1000,
        ...(i % 3 ? { key: `k${i % 5}` } : {}),
      };
      // Now and then a line the encoder leaves to the string, and a long path.
      if (i % 101 === 0) e.ms = 0.0001 * i;
      if (i % 250 === 0) e.path = "/" + "x".repeat(3000);
      entries.push(e);
      logs.request(e);
    }
    await logs.close();
    expect(sink.text()).toBe(entries.map((e) => JSON.stringify(e) + "\n").join(""));
    expect(sink.chunks).toBeGreaterThan((1000 * 100) / 4096);
  });

  it("writes a line longer than a batch on its own", async () => {
    const sink = collect();
    const logs = createLogBuffer(sink, { maxBytes: 256, flushMs: 60_000 });
    const long = { ...base, path: "/" + "y".repeat(400) };
    logs.request(base);
    logs.request(long);
    logs.request(base);
    await logs.close();
    expect(sink.text()).toBe([base, long, base].map((e) => JSON.stringify(e) + "\n").join(""));
  });
});

describe("redisAddress: what the server says of REDIS_URL", () => {
  it.each([
    ["redis://127.0.0.1:6379", "redis://127.0.0.1:6379"],
    ["rediss://:s3cret@cache.internal:6380/2", "rediss://cache.internal:6380/2"],
    ["redis://user:pa55@[::1]:6379", "redis://[::1]:6379"],
  ])("%s is named %s: never its user name or password", (url, named) => {
    expect(redisAddress(url)).toBe(named);
  });
});
