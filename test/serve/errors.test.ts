// Errors: an unexpected one becomes a 500 that says nothing of the internals and is logged with its stack; JSONP
// clients get errors as a call to their callback (status kept, or 200 with suppress_response_codes=1); protocol
// errors are problem bodies too.
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ErrorLog } from "../../src/serve/handler.ts";
import { startTestApi, withKey } from "../helpers/fixture.ts";
import type { TestApi } from "../helpers/fixture.ts";

let api: TestApi;
const errors: ErrorLog[] = [];
beforeAll(async () => {
  api = await startTestApi(undefined, { onError: (e) => errors.push(e) });
});
afterAll(() => api.close());

describe("an unexpected error", () => {
  it("is a 500 internal_error to the client and one log entry with its stack, method and path, never the key", async () => {
    // Break the loaded snapshot the way a bug would: the search index names a product the snapshot no longer holds.
    api.handler.snapshot().products.delete(1);
    const res = await api.get(withKey(api, "/v1/products", "q=leather"));
    expect(res.status).toBe(500);
    const body = (await res.json()) as { code: string; detail: string };
    expect(body.code).toBe("internal_error");
    expect(body.detail).not.toContain("product 1");
    expect(errors).toHaveLength(1);
    const entry = errors[0]!;
    expect(entry).toMatchObject({
      level: "error",
      event: "request_failed",
      method: "GET",
      path: "/v1/products",
      error: { name: "Error", message: "search index names product 1, which the snapshot does not hold" },
    });
    expect(entry.error.stack).toContain("searchBody");
    expect(JSON.stringify(entry)).not.toContain(api.key);
  });

  it("an ApiError (a 404, a 400) is not logged as an error", async () => {
    const before = errors.length;
    expect((await api.get(withKey(api, "/v1/products/999/detail.json"))).status).toBe(404);
    expect((await api.get(withKey(api, "/v1/products", "q="))).status).toBe(400);
    expect(errors).toHaveLength(before);
  });
});

describe("errors to JSONP clients", () => {
  const cases: [string, string, number, number, string][] = [
    // [path, params, status without suppress, problem status, code]
    ["/v1/products/999/detail.json", "callback=app.cb_1", 404, 404, "not_found"],
    ["/v1/sales/shoes/active.json", "callback=cb", 404, 404, "not_found"],
    ["/v1/products", "q=&callback=cb", 400, 400, "invalid_parameter"],
    ["/v1/products/1/detail.json", "affid=a%20b&callback=cb", 400, 400, "invalid_parameter"],
  ];
  it.each(cases)(
    "%s?%s: a script calling the callback with the problem, status %i",
    async (path, params, status, problemStatus, code) => {
      for (const suppress of [false, true]) {
        const res = await api.get(withKey(api, path, params + (suppress ? "&suppress_response_codes=1" : "")));
        expect(res.status).toBe(suppress ? 200 : status);
        expect(res.headers.get("content-type")).toBe("application/javascript; charset=utf-8");
        expect(res.headers.get("x-content-type-options")).toBe("nosniff");
        expect(res.headers.get("cache-control")).toBe("no-store");
        const text = await res.text();
        const callback = /callback=([^&]+)/.exec(params)![1]!;
        expect(text.startsWith(`/**/${callback}(`)).toBe(true);
        expect(text.endsWith(");")).toBe(true);
        const problem = JSON.parse(text.slice(`/**/${callback}(`.length, -2)) as { status: number; code: string };
        expect(problem).toMatchObject({ status: problemStatus, code });
      }
    },
  );

  it("a missing key with a callback: a 401 call; an invalid callback: a plain problem+json 400", async () => {
    const res = await api.get("/v1/sales/active.json?callback=cb&suppress_response_codes=1");
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/^\/\*\*\/cb\(\{.*"status":401.*"code":"api_key_missing"\}\);$/);
    const bad = await api.get(withKey(api, "/v1/products/999/detail.json", "callback=alert(1)"));
    expect(bad.status).toBe(400);
    expect(bad.headers.get("content-type")).toBe("application/problem+json");
  });

  it("without a callback nothing changes: suppress_response_codes alone is ignored", async () => {
    const res = await api.get(withKey(api, "/v1/products/999/detail.json", "suppress_response_codes=1"));
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
  });
});

/** Raw bytes in, the whole response out (the server closes the connection after a protocol error). */
function raw(bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(api.server.port, "127.0.0.1", () => socket.end(bytes));
    const chunks: Buffer[] = [];
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("end", () => resolve(Buffer.concat(chunks).toString("latin1")));
    socket.on("error", reject);
  });
}

describe("protocol errors", () => {
  it.each([
    ["a malformed request line", "GARBAGE\r\n\r\n", 400, "invalid_request"],
    [
      "headers over the limit",
      `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`,
      431,
      "headers_too_large",
    ],
  ])("%s: a problem body with its code", async (_what, bytes, status, code) => {
    const text = await raw(bytes);
    expect(text).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
    expect(text).toContain("Content-Type: application/problem+json");
    const body = JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4)) as { status: number; code: string };
    expect(body).toMatchObject({ status, code });
  });
});
