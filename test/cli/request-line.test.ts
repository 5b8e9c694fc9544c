// The request log line is exactly JSON.stringify of its entry (it is built by hand because every request pays for it);
// the Redis address the server logs carries no credentials.
import { describe, expect, it } from "vitest";
import { redisAddress, requestLine } from "../../src/cli/run-server.ts";
import type { RequestLog } from "../../src/serve/handler.ts";

const base: RequestLog = {
  time: "2026-11-23T18:00:00.123Z",
  method: "GET",
  path: "/v1/products/1/detail.json",
  status: 200,
  bytes: 703,
  ms: 0.123,
};

describe("requestLine", () => {
  it.each<[string, RequestLog]>([
    ["a served request with a key", { ...base, key: "demo" }],
    ["no key", base],
    ["quotes, backslashes and control characters in the path", { ...base, path: '/v1/"a"\\b\n\t\u0000\u007f' }],
    ["non-ASCII and a lone surrogate", { ...base, path: "/v1/caf\u00e9/\ud83d\ude00/\ud800", key: 'k"1' }],
    ["an odd method and a 0 ms request", { ...base, method: "PROPFIND", status: 405, bytes: 0, ms: 0 }],
    ["a very small and a large duration", { ...base, ms: 1e-7, bytes: 123456789 }],
    ["a slow request", { ...base, ms: 12345.678, status: 503 }],
  ])("%s", (_, entry) => {
    expect(requestLine(entry)).toBe(JSON.stringify(entry) + "\n");
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
