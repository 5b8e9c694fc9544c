// The edge contract (issue 26), as one set of tests that each shipped front runs (test/deploy/edge-*.test.ts): through
// the front, the contract's requests get what the server alone gives but for the headers the front owns; one cached
// copy serves every key; a revoked key is refused within 2 s plus the check's cache time; a key over its limit gets
// the API's 429; a sale shows and goes within a second of its instants; the failed-key lockout still applies.
// The server runs on the real clock (the fronts count their TTLs on it).
import { request } from "node:http";
import type { IncomingHttpHeaders } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKey, revokeKey } from "../../src/keys/keys-file.ts";
import type { RequestLog } from "../../src/serve/handler.ts";
import { createReloader } from "../../src/serve/http/reloader.ts";
import type { Reloader } from "../../src/serve/http/reloader.ts";
import { iso, product, sale, standardCatalog, startTestApi, T0 } from "./fixture.ts";
import type { TestApi } from "./fixture.ts";

/** A front started in front of a server's port; stopped after its file. */
interface RunningFront {
  url: string;
  stop(): Promise<void>;
}

/**
 * What a front does to the headers it owns, beyond those every front owns (FRONT_OWNED): its Cache-Control for an
 * origin's, and whether it sends RateLimit-* of its own (Varnish) or none (nginx).
 */
interface FrontRules {
  /** Whether the front's Cache-Control (with its Age) stands for the origin's. */
  cacheControl(origin: string | undefined, front: string | undefined, age: number): boolean;
}

/** Headers every front owns: framing, its own identity, the cache's verdict and age, and the per-key rate limit. */
const FRONT_OWNED = new Set([
  "date",
  "server",
  "connection",
  "keep-alive",
  "transfer-encoding",
  "content-length", // framing: the bodies are compared byte for byte
  "x-cache",
  "age",
  "via",
  "x-varnish",
  "accept-ranges",
  "ratelimit-limit",
  "ratelimit-remaining",
  "ratelimit-reset",
  "cache-control", // compared by the front's rules
]);

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** One request over a new connection (from `localAddress`, a loopback address), its body as sent (not decoded). */
export function send(
  base: string,
  target: string,
  o: { method?: string; headers?: Record<string, string>; localAddress?: string } = {},
): Promise<Answer> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: target,
        method: o.method ?? "GET",
        headers: o.headers ?? {},
        agent: false,
        ...(o.localAddress ? { localAddress: o.localAddress } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end();
  });
}

/** An answer as compared: status, the headers no front owns, and the body. */
function comparable(a: Answer) {
  const headers = Object.fromEntries(Object.entries(a.headers).filter(([name]) => !FRONT_OWNED.has(name)));
  return { status: a.status, headers, body: a.body.toString("latin1") };
}

/** The contract's requests (test/serve/contract.test.ts and the error tests), with the key `k` where one goes. */
function contractTargets(k: string): string[] {
  const key = `apikey=${k}`;
  return [
    `/v1/sales/active.json?${key}`,
    `/v1/sales/active.json?${key}&affid=partner-7`,
    `/v1/sales/active.json?affid=partner-7&${key}&callback=cb`,
    `/v1/sales/women/active.json?${key}`,
    `/v1/sales/kids/active.json?${key}`,
    `/v1/sales/shoes/active.json?${key}`,
    `/v1/sales/shoes/active.json?${key}&callback=cb`,
    `/v1/sales/shoes/active.json?${key}&callback=cb&suppress_response_codes=1`,
    `/v1/sales/upcoming.json?${key}`,
    `/v1/sales/home/upcoming.json?${key}`,
    `/v1/sales/upcoming.ics?${key}`,
    `/v1/sales/women/upcoming.ics?${key}&affid=partner-7`,
    `/v1/sales/women/boots/detail.json?${key}`,
    `/v1/sales/women/boots/detail.json?${key}&affid=partner-7&callback=cb`,
    `/v1/sales/kids/rainy/detail.json?${key}`, // ended: a 404 a cache keeps
    `/v1/sales/women/nope/detail.json?${key}`,
    `/v1/products/1/detail.json?${key}`,
    `/v1/products/1/detail.json?affid=partner-7&${key}`,
    `/v1/products/3/detail.json?${key}`, // between sales: a 404 a cache keeps
    `/v1/products/999/detail.json?${key}`,
    `/v1/products/categories.json?${key}`,
    `/v1/products/sizes.json?${key}`,
    `/v1/products?${key}&q=boot`,
    `/v1/products?q=boot&rows=1&start=1&${key}`,
    `/v1/products?${key}&store=women&brand=Acme%20Shoes`,
    `/v1/products?${key}&q=boot&callback=cb`,
    `/v1/products?${key}&rows=1000`,
    `/v1/nothing.json?${key}`,
    `/v1/sales/active.json?${key}&affid=bad!`,
    `/v1/sales/active.json?${key}&callback=1bad`,
    // keys: missing, empty, invalid, malformed, twice, a name the API decodes, a name it does not, bad encoding, JSONP
    `/v1/sales/active.json`,
    `/v1/sales/active.json?apikey=`,
    `/v1/sales/active.json?apikey=${"A".repeat(32)}`,
    `/v1/sales/active.json?apikey=short`,
    `/v1/sales/active.json?${key}&${key}`,
    `/v1/sales/active.json?apikey=${"A".repeat(32)}&${key}`, // two keys side by side: the check is asked about both
    `/v1/sales/active.json?ap%69key=${k}&affid=encoded`,
    `/v1/sales/active.json?APIKEY=${k}`,
    `/v1/sales/active.json?apikey=%ZZ`,
    `/v1/sales/active.json?apikey=${"A".repeat(32)}&callback=cb`,
    `/v1/sales/active.json?apikey=${"A".repeat(32)}&callback=cb&suppress_response_codes=1`,
    // no key needed; and the key check, which is not a client's
    `/v1/openapi.json`,
    `/docs`,
    `/healthz`,
    `/nothing`,
    `/edge/key?${key}`,
    `/edge/key`,
    `/%65dge/key?${key}`,
    `//edge//key?${key}`,
  ];
}

/** The contract's requests with the key `k` in a header (issue 35): each way, the same key twice, and the refusals. */
type HeaderKeyCase = { target: string; method?: string; headers: Record<string, string> };
function headerKeyCases(k: string): HeaderKeyCase[] {
  const targets = [
    "/v1/sales/active.json",
    "/v1/sales/active.json?affid=partner-7",
    "/v1/sales/women/boots/detail.json?affid=partner-7&callback=cb",
    "/v1/sales/kids/rainy/detail.json", // ended: a 404 a cache keeps
    "/v1/products/1/detail.json",
    "/v1/products?q=boot",
    "/v1/sales/upcoming.ics",
  ];
  const unknown = "A".repeat(32);
  return [
    ...targets.flatMap((target): HeaderKeyCase[] => [
      { target, headers: { "X-Api-Key": k } },
      { target, headers: { Authorization: `Bearer ${k}` } },
    ]),
    { target: `/v1/sales/active.json?apikey=${k}`, headers: { "X-Api-Key": k } },
    { target: "/v1/sales/active.json", headers: { "X-Api-Key": k, Authorization: `bearer  ${k}` } },
    { target: `/v1/sales/active.json?apikey=${k}`, headers: { "X-Api-Key": "B".repeat(32) } }, // two keys: a 400
    { target: "/v1/sales/active.json", headers: { "X-Api-Key": unknown } },
    { target: "/v1/sales/active.json", headers: { Authorization: `Bearer ${unknown}` } },
    { target: "/v1/sales/active.json", headers: { Authorization: "Bearer short" } },
    { target: "/v1/sales/active.json", headers: { Authorization: "Basic dXNlcjpwYXNz" } }, // not a key
    { target: `/v1/sales/active.json?apikey=${k}`, headers: { Authorization: "Basic dXNlcjpwYXNz" } },
    { target: "/v1/sales/active.json?callback=cb", headers: { "X-Api-Key": unknown } },
    {
      target: "/v1/sales/active.json",
      method: "OPTIONS",
      headers: { Origin: "https://partner.example", "Access-Control-Request-Method": "GET" },
    },
  ];
}

/** Registers the edge contract's tests for the front that `start` starts in front of a server's port. */
export function describeEdgeContract(
  name: string,
  start: (port: number, keysFile: string) => Promise<RunningFront>,
  rules: FrontRules,
) {
  const FLASH = "flash";
  let api: TestApi;
  let front: RunningFront;
  let reloader: Reloader;
  const logs: RequestLog[] = [];
  /** The flash sale's instants, epoch seconds. */
  let begins: number;
  let ends: number;

  beforeAll(async () => {
    const now = Math.ceil(Date.now() / 1000);
    begins = now + 8;
    ends = begins + 3;
    // The standard catalog moved to the real clock (its main sale began at T0: a minute ago), and a flash sale soon.
    const catalog = standardCatalog();
    const moved = (t: string | undefined) => (t === undefined ? undefined : iso(Date.parse(t) / 1000 + now - 60 - T0));
    catalog.sales = catalog.sales.map((s) => ({ ...s, begins: moved(s.begins)!, ends: moved(s.ends) }));
    catalog.products.push(product(77, { name: "Flash Boot" }));
    catalog.sales.push(sale(FLASH, { begins: iso(begins), ends: iso(ends), product_ids: [77] }));
    api = await startTestApi(catalog, {
      clock: Date.now,
      trustProxy: ["127.0.0.1"],
      log: (entry) => logs.push(entry),
    });
    // As `npm run serve` runs it: a key revoked in the keys file is applied within milliseconds.
    reloader = createReloader(api.handler, api.dataDir, api.keysFile, { watchKeys: true });
    front = await start(Number(new URL(api.url).port), api.keysFile);
  }, 60_000);

  afterAll(async () => {
    reloader?.stop();
    await front?.stop();
    await api?.close();
  });

  describe(`${name}: keys checked at the edge`, () => {
    it("answers the contract's requests as the server alone does, but for the headers the front owns", async () => {
      const cases: { target: string; method?: string; headers?: Record<string, string> }[] = [
        ...contractTargets(api.key).map((target) => ({ target })),
        ...["gzip", "br, gzip", "identity"].flatMap((encoding) =>
          [`/v1/sales/active.json?apikey=${api.key}`, `/v1/products/1/detail.json?apikey=${api.key}`].map((target) => ({
            target,
            headers: { "Accept-Encoding": encoding },
          })),
        ),
        { target: `/v1/sales/active.json?apikey=${api.key}`, method: "HEAD" },
        { target: `/v1/sales/active.json?apikey=${api.key}`, method: "POST" },
        { target: `/v1/sales/active.json?apikey=${"B".repeat(32)}`, method: "DELETE" },
        ...headerKeyCases(api.key),
      ];
      for (const c of cases) {
        // From 127.0.0.2: to the server, a client like any other, not its proxy (127.0.0.1, the front).
        const o = {
          localAddress: "127.0.0.2",
          ...(c.method ? { method: c.method } : {}),
          ...(c.headers ? { headers: c.headers } : {}),
        };
        // The origin before and after the front: if they differ, an instant passed (or /healthz's age): again.
        for (let attempt = 0; ; attempt++) {
          const before = await send(api.url, c.target, o);
          const miss = await send(front.url, c.target, o);
          const hit = await send(front.url, c.target, o);
          const after = await send(api.url, c.target, o);
          if (JSON.stringify(comparable(before)) !== JSON.stringify(comparable(after)) && attempt < 3) continue;
          for (const got of [miss, hit]) {
            const label = `${c.method ?? "GET"} ${c.target} ${JSON.stringify(c.headers ?? {})}`;
            expect([label, comparable(got)]).toEqual([label, comparable(before)]);
            const [mine, its] = [got.headers["cache-control"], before.headers["cache-control"]];
            const stands = rules.cacheControl(its, mine, Number(got.headers.age ?? 0));
            expect([label, its, mine, stands]).toEqual([label, its, mine, true]);
          }
          // A conditional request for what has an ETag: the front's 304 is the server's. (In the last second before
          // an instant, max-age=0, the front keeps no copy and answers a 200: not compared.)
          const etag = before.headers.etag;
          if (etag && before.status === 200 && c.method === undefined) {
            const conditional = { ...o, headers: { ...c.headers, "If-None-Match": etag } };
            const origin = await send(api.url, c.target, conditional);
            const via = await send(front.url, c.target, conditional);
            if (!/max-age=0$/.test(origin.headers["cache-control"] ?? ""))
              expect([c.target, via.status, via.headers.etag]).toEqual([c.target, origin.status, origin.headers.etag]);
          }
          break;
        }
      }
    }, 60_000);

    it("keeps one copy for every key: the server answers a resource once, and each key's check once", async () => {
      const keys: string[] = [];
      for (let i = 0; i < 20; i++) keys.push(await createKey(api.keysFile, `partner-${i}`, new Date()));
      await api.handler.reload();
      const path = "/v1/products/2/detail.json";
      const from = logs.length;
      // All at once: the requests that find no copy wait for the one that fetches it.
      const answers = await Promise.all(keys.map((k) => send(front.url, `${path}?apikey=${k}`)));
      expect(answers.map((r) => r.status)).toEqual(keys.map(() => 200));
      const asked = logs.slice(from);
      expect(asked.filter((l) => l.path === path).length).toBe(1);
      expect(asked.filter((l) => l.path === "/edge/key").length).toBe(keys.length);
    });

    it("keeps one copy for keys in the query and in either header, and never lets a header's key admit another request", async () => {
      const k = await createKey(api.keysFile, "header-partner", new Date());
      await api.handler.reload();
      const path = "/v1/products/2/detail.json?affid=headers";
      const from = logs.length;
      const ways: HeaderKeyCase[] = [
        { target: `${path}&apikey=${k}`, headers: {} },
        { target: path, headers: { "X-Api-Key": k } },
        { target: path, headers: { Authorization: `Bearer ${k}` } },
        { target: path, headers: { "X-Api-Key": api.key } },
      ];
      for (const way of ways) expect((await send(front.url, way.target, { headers: way.headers })).status).toBe(200);
      expect(logs.slice(from).filter((l) => l.path === "/v1/products/2/detail.json").length).toBe(1);
      // The checks allowed above are of those keys alone: without a key, or with another, the request is refused.
      const others: Record<string, string>[] = [
        {},
        { "X-Api-Key": "C".repeat(32) },
        { Authorization: "Bearer " + "C".repeat(32) },
      ];
      for (const headers of others) {
        const refused = await send(front.url, path, { headers });
        expect([JSON.stringify(headers), refused.status]).toEqual([JSON.stringify(headers), 401]);
      }
      const answer = await send(front.url, path, { headers: { "X-Api-Key": k } });
      expect(answer.headers.vary).toBe("Accept-Encoding, Authorization, X-Api-Key");
    });

    it("refuses a revoked key within 2 s plus the check's cache time (EDGE_KEY_TTL, 2 s) of the revocation", async () => {
      const k = await createKey(api.keysFile, "revoked-soon", new Date());
      await api.handler.reload();
      const target = `/v1/sales/women/active.json?apikey=${k}`;
      expect((await send(front.url, target)).status).toBe(200);
      await revokeKey(api.keysFile, "revoked-soon");
      const revoked = Date.now();
      let status = 200;
      while (status === 200 && Date.now() - revoked < 10_000) {
        await new Promise((r) => setTimeout(r, 20));
        status = (await send(front.url, target)).status;
      }
      const ms = Date.now() - revoked;
      console.log(`${name}: the first 401 at the front came ${ms} ms after the revocation`);
      expect(status).toBe(401);
      // nginx and Varnish count a max-age of 2 in whole seconds from the second the check was fetched in: up to 3 s.
      expect(ms).toBeLessThan(2_000 + 3_000);
    }, 15_000);

    it("answers a key over its own limit with the API's 429 and Retry-After, and serves it again once it refills", async () => {
      const k = await createKey(api.keysFile, "limited", new Date(), { rate: 1, burst: 4 });
      await api.handler.reload();
      const target = `/v1/products/categories.json?apikey=${k}`;
      const statuses: number[] = [];
      let refused: Answer | undefined;
      for (let i = 0; i < 6; i++) {
        const r = await send(front.url, target);
        statuses.push(r.status);
        if (r.status === 429) refused = r;
      }
      expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
      expect([refused!.headers["retry-after"], refused!.headers["content-type"]]).toEqual([
        "1",
        "application/problem+json",
      ]);
      expect(JSON.parse(refused!.body.toString())).toEqual({
        type: "urn:flash-sale-api:problem:rate_limited",
        title: "Too many requests",
        status: 429,
        detail: "this key may make 1 requests a second (bursts of 4); retry after 1 s",
        code: "rate_limited",
      });
      const jsonp = await send(front.url, `${target}&callback=cb`);
      expect([jsonp.status, jsonp.body.toString().startsWith("/**/cb({")]).toEqual([429, true]);
      let again = 429;
      for (const deadline = Date.now() + 3_000; again === 429 && Date.now() < deadline;) {
        await new Promise((r) => setTimeout(r, 100));
        again = (await send(front.url, target)).status;
      }
      expect(again).toBe(200);
    });

    it("shows a sale within 1 s of its beginning and not after 1 s past its end; its 404 afterwards is kept", async () => {
      const list = `/v1/sales/active.json?apikey=${api.key}&affid=instants`;
      const detail = `/v1/sales/women/${FLASH}/detail.json?apikey=${api.key}`;
      const seen: { t: number; done: number; inList: boolean; detail: number; detailHit: boolean }[] = [];
      while (Date.now() / 1000 < ends + 2.5) {
        const t = Date.now() / 1000;
        const [l, d] = await Promise.all([send(front.url, list), send(front.url, detail)]);
        expect(l.status).toBe(200);
        seen.push({
          t,
          done: Date.now() / 1000,
          inList: l.body.toString("latin1").includes(`"sale_key":"${FLASH}"`),
          detail: d.status,
          detailHit: d.headers["x-cache"] === "HIT",
        });
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(seen.filter((s) => s.t >= begins + 1 && s.done < ends).every((s) => s.inList)).toBe(true);
      expect(seen.filter((s) => s.done < begins - 0.05).some((s) => s.inList)).toBe(false);
      expect(seen.filter((s) => s.t >= ends + 1).some((s) => s.inList)).toBe(false);
      const afterEnd = seen.filter((s) => s.t >= ends + 1);
      expect(afterEnd.length).toBeGreaterThan(5);
      expect(afterEnd.every((s) => s.detail === 404)).toBe(true);
      expect(afterEnd.filter((s) => s.detailHit).length / afterEnd.length).toBeGreaterThanOrEqual(0.8);
    }, 30_000);
  });

  describe(`${name}: the failed-key lockout`, () => {
    let guarded: TestApi;
    let guardedFront: RunningFront;
    beforeAll(async () => {
      // Three failed keys per address, then one every 100 s.
      guarded = await startTestApi(standardCatalog(), {
        clock: Date.now,
        trustProxy: ["127.0.0.1"],
        authFailureLimit: { rate: 0.01, burst: 3 },
      });
      guardedFront = await start(Number(new URL(guarded.url).port), guarded.keysFile);
    }, 60_000);
    afterAll(async () => {
      await guardedFront?.stop();
      await guarded?.close();
    });

    it("still applies per client address through the front; the lockout's 401 is never kept", async () => {
      const target = (k: string) => `/v1/products/categories.json?apikey=${k}`;
      const wrong = (i: number) => `Wr0ng${i}`.padEnd(32, "x");
      const problem = (a: Answer) => [a.status, (JSON.parse(a.body.toString()) as { detail: string }).detail];
      const from2 = { localAddress: "127.0.0.2" };
      for (let i = 0; i < 3; i++) {
        const r = await send(guardedFront.url, target(wrong(i)), from2);
        expect([...problem(r), r.headers["retry-after"]]).toEqual([
          401,
          "apikey is not a valid key (unknown or revoked)",
          undefined,
        ]);
      }
      for (let i = 0; i < 2; i++) {
        const locked = await send(guardedFront.url, target(wrong(3)), from2);
        expect([locked.status, locked.headers["retry-after"], locked.headers["cache-control"]]).toEqual([
          401,
          "100",
          "no-store",
        ]);
        expect(problem(locked)[1]).toContain("too many failed API-key attempts from this address");
      }
      // A valid key from that address is served; a wrong one from another address is refused as such.
      expect((await send(guardedFront.url, target(guarded.key), from2)).status).toBe(200);
      const other = await send(guardedFront.url, target(wrong(4)), { localAddress: "127.0.0.3" });
      expect(problem(other)).toEqual([401, "apikey is not a valid key (unknown or revoked)"]);
    });
  });
}
