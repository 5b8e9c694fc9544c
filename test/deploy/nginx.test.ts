// deploy/nginx/flash-sale-api.conf in front of a real server, through a real nginx (Debian's `nginx-light`, installed
// by npm test's first step): 200s are cached and revalidated, errors are not, every valid key shares one copy and a
// refused key gets the API's 401, never a copy; what leaves nginx tells a cache behind it to revalidate (nginx would
// otherwise pass on the API's max-age as if the copy were new). Its access and error logs never hold a key, wherever
// the key is in the query string and whatever the answer. test/deploy/edge-nginx.test.ts has the key checks at length.
import { readFile } from "node:fs/promises";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKey } from "../../src/keys/keys-file.ts";
import type { Front, NginxLogs } from "../../scripts/lib/fronts.ts";
import { freePort, standardCatalog, startTestApi, T0 } from "../helpers/fixture.ts";
import type { TestApi } from "../helpers/fixture.ts";
import { startNginx } from "../helpers/fronts.ts";

type Nginx = Front & { logs: NginxLogs };
const running: Nginx[] = [];

let api: TestApi;
let nginx: Nginx;
let cacheUrl: string;

beforeAll(async () => {
  // nginx checks keys with the server's GET /edge/key, which it answers to its proxies only.
  api = await startTestApi(standardCatalog(), { trustProxy: ["127.0.0.1"] });
  api.clock.now = T0;
  nginx = await startNginx(Number(new URL(api.url).port));
  running.push(nginx);
  cacheUrl = nginx.url;
}, 60_000);

afterAll(async () => {
  for (const n of running) await n.stop();
  await api?.close();
});

async function viaCache(path: string, headers: Record<string, string> = {}) {
  const res = await fetch(cacheUrl + path, { headers });
  return {
    status: res.status,
    cache: res.headers.get("x-cache"),
    cacheControl: res.headers.get("cache-control"),
    etag: res.headers.get("etag"),
    encoding: res.headers.get("content-encoding"),
    body: await res.text(),
  };
}

describe("nginx with deploy/nginx/flash-sale-api.conf", () => {
  it("caches a 200 and tells caches behind it to revalidate; If-None-Match gives a 304", async () => {
    const path = `/v1/sales/active.json?apikey=${api.key}`;
    const first = await viaCache(path);
    const second = await viaCache(path);
    expect([first.status, first.cache, first.cacheControl]).toEqual([200, "MISS", "public, no-cache"]);
    expect([second.status, second.cache, second.cacheControl, second.body]).toEqual([
      200,
      "HIT",
      "public, no-cache",
      first.body,
    ]);
    const revalidated = await fetch(cacheUrl + path, { headers: { "If-None-Match": first.etag! } });
    expect(revalidated.status).toBe(304);
    const br = await viaCache(path, { "Accept-Encoding": "gzip;q=0.5, br" });
    const br2 = await viaCache(path, { "Accept-Encoding": "br" });
    expect([br.encoding, br2.encoding, br2.cache]).toEqual(["br", "br", "HIT"]);
  });

  it("answers a missing or invalid key with the API's 401, never from a copy; every valid key shares the copy", async () => {
    await viaCache(`/v1/sales/active.json?apikey=${api.key}`);
    for (const path of ["/v1/sales/active.json", `/v1/sales/active.json?apikey=${"A".repeat(32)}`]) {
      // The key check's answer is kept for EDGE_KEY_TTL: the second refusal comes from it, still no-store onward.
      const first = await viaCache(path);
      const again = await viaCache(path);
      expect([path, first.status, first.cache, first.cacheControl]).toEqual([path, 401, "MISS", "no-store"]);
      expect([path, again.status, again.cache, again.cacheControl, again.body]).toEqual([
        path,
        401,
        "HIT",
        "no-store",
        first.body,
      ]);
    }
    const other = await createKey(api.keysFile, "other-partner", new Date(), { rate: 1e9, burst: 1e9 });
    await api.handler.reload();
    const shared = await viaCache(`/v1/sales/active.json?apikey=${other}`);
    expect([shared.status, shared.cache]).toEqual([200, "HIT"]);
  });

  it("caches the 404 of a product between sales like a 200; not that of an unknown product", async () => {
    const between = `/v1/products/3/detail.json?apikey=${api.key}`;
    const unknown = `/v1/products/999/detail.json?apikey=${api.key}`;
    await viaCache(between);
    await viaCache(unknown);
    const b = await viaCache(between);
    const u = await viaCache(unknown);
    expect([b.status, b.cache, b.cacheControl]).toEqual([404, "HIT", "public, no-cache"]);
    expect([u.status, u.cache, u.cacheControl]).toEqual([404, "MISS", "no-store"]);
  });
});

/** The text of a log file; "" while nginx has not made it. */
async function logText(path: string): Promise<string> {
  return readFile(path, "utf8").catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return "";
    throw err;
  });
}

/** Polls `path` every 10 ms until it holds every one of `parts` (nginx logs a request once its answer is sent). */
async function waitForLog(path: string, parts: readonly string[], ms = 5_000): Promise<string> {
  const deadline = Date.now() + ms;
  for (;;) {
    const text = await logText(path);
    if (parts.every((p) => text.includes(p))) return text;
    if (Date.now() > deadline)
      throw new Error(`${path} lacks ${parts.filter((p) => !text.includes(p)).join(", ")}:\n${text}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * A POST announcing a 2 MB body (over nginx's client_max_body_size), headers only: nginx answers 413 itself and
 * writes an `error` line about it, naming the request. Resolves with the status line, once the head has come (nginx
 * would wait up to lingering_timeout, 5 s, for the body before closing).
 */
function tooLarge(url: string, target: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(url).port), "127.0.0.1");
    let answer = "";
    socket.setEncoding("latin1");
    socket.on("data", (c: string) => {
      answer += c;
      if (!answer.includes("\r\n\r\n")) return;
      socket.destroy();
      resolve(answer.split("\r\n")[0]!);
    });
    socket.on("close", () => reject(new Error(`closed after ${JSON.stringify(answer)}`)));
    socket.on("error", reject);
    socket.write(
      `POST ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2000000\r\nContent-Type: text/plain\r\n\r\n`,
    );
  });
}

describe("nginx's logs", () => {
  it("hold the path and the other parameters of every request, never its key (access and error logs)", async () => {
    const key = api.key;
    const bad = "Bq7".repeat(10) + "zz"; // 32 letters and digits, no key's
    const secrets = [key, bad, "A".repeat(32)]; // the last: the invalid key an earlier test sends
    // [request target, status, what the access log says of it]
    const cases: [string, number, string][] = [
      [`/v1/sales/active.json?apikey=${key}`, 200, "/v1/sales/active.json?apikey=[redacted]"],
      [
        `/v1/sales/active.json?affid=log-last&apikey=${key}`,
        200,
        "/v1/sales/active.json?affid=log-last&apikey=[redacted]",
      ],
      [
        `/v1/sales/upcoming.json?affid=log-middle&apikey=${key}&callback=cb`,
        200,
        "/v1/sales/upcoming.json?affid=log-middle&apikey=[redacted]&callback=cb",
      ],
      // Names the API decodes: nginx passes them on as sent, the API takes them for `apikey`.
      [
        `/v1/sales/active.json?ap%69key=${key}&affid=log-encoded`,
        200,
        "/v1/sales/active.json?apikey=[redacted]&affid=log-encoded",
      ],
      [
        `/v1/products/1/detail.json?%61%70%69%6B%65%79=${key}&affid=log-all-encoded`,
        200,
        "/v1/products/1/detail.json?apikey=[redacted]&affid=log-all-encoded",
      ],
      [
        `/v1/sales/active.json?apikey=${bad}&affid=log-invalid`,
        401,
        "/v1/sales/active.json?apikey=[redacted]&affid=log-invalid",
      ],
      [`/v1/nothing.json?affid=log-404&apikey=${key}`, 404, "/v1/nothing.json?affid=log-404&apikey=[redacted]"],
      // Twice: everything from the first to the last is replaced.
      [
        `/v1/sales/active.json?apikey=${key}&affid=log-twice&apikey=${bad}&rows=5`,
        401,
        "/v1/sales/active.json?apikey=[redacted]&rows=5",
      ],
    ];
    const expected: string[] = [];
    for (const [target, status, logged] of cases) {
      const r = await viaCache(target);
      expect([target, r.status]).toEqual([target, status]);
      expected.push(`"GET ${logged} HTTP/1.1" ${status} `);
    }
    // Answered by nginx itself, with an `error` line in the error log at nginx's default level.
    expect(await tooLarge(cacheUrl, `/v1/sales/active.json?affid=log-413&apikey=${key}`)).toBe(
      "HTTP/1.1 413 Request Entity Too Large",
    );
    expected.push(`"POST /v1/sales/active.json?affid=log-413&apikey=[redacted] HTTP/1.1" 413 `);

    // An API that cannot be reached (nothing listens on its port): a 502, and an `error` line naming the request and
    // the upstream URI, both with the key. `control` is the same with the error log at `error`, as nginx's default.
    const downPort = await freePort();
    const down = await startNginx(downPort);
    const control = await startNginx(downPort, (site) => site.replace(/(error_log \S+) crit;/, "$1 error;"));
    running.push(down, control);
    for (const n of [down, control]) {
      const r = await fetch(`${n.url}/v1/sales/active.json?affid=log-502&apikey=${key}`);
      expect(r.status).toBe(502);
      await r.text();
      expect(await tooLarge(n.url, `/v1/sales/active.json?affid=log-413&apikey=${key}`)).toContain(" 413 ");
    }
    const downLine = `"GET /v1/sales/active.json?affid=log-502&apikey=[redacted] HTTP/1.1" 502 `;
    await waitForLog(down.logs.access, [downLine]);
    const controlErrors = await waitForLog(control.logs.error, ["connect() failed", "too large body"]);
    expect(controlErrors).toContain(`request: "GET /v1/sales/active.json?affid=log-502&apikey=${key} HTTP/1.1"`);
    expect(controlErrors).toContain(
      `upstream: "http://127.0.0.1:${downPort}/v1/sales/active.json?affid=log-502&apikey=${key}"`,
    );
    expect(controlErrors).toContain(`request: "POST /v1/sales/active.json?affid=log-413&apikey=${key} HTTP/1.1"`);

    const access = await waitForLog(nginx.logs.access, expected);
    // Every request of this file is in the access log (the earlier tests' too): none with a key, or anything after
    // `apikey=` but the placeholder.
    expect(access.split("\n").filter(Boolean).length).toBeGreaterThanOrEqual(expected.length + 10);
    expect(access).not.toMatch(/apikey=(?!\[redacted\])/i);
    expect(access).not.toContain("%61%70");
    for (const n of [nginx, down]) {
      for (const path of Object.values(n.logs)) {
        const text = await logText(path);
        for (const secret of secrets) expect([path, text.includes(secret)]).toEqual([path, false]);
      }
    }
    // The error log holds nothing at all at `crit` after this traffic; nginx's own log no request.
    expect(await logText(nginx.logs.error)).toBe("");
    expect(await logText(down.logs.error)).toBe("");
    expect(await logText(down.logs.global)).not.toContain("request:");
  });
});
