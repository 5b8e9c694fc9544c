// The fronts' log lines as usage: which are counted (what the front answered itself, for a named key) and which are
// left to the server that answered them. The real fronts' lines are counted in nginx.test.ts and varnish.test.ts.
import { describe, expect, it } from "vitest";
import { countCacheLine, countNginxLine } from "../../src/usage/cache-log.ts";
import { Meter } from "../../src/usage/meter.ts";

const T = Date.parse("2026-11-22T17:00:00Z");
const REQUEST = '127.0.0.1 - - [22/Nov/2026:17:00:00 +0000] "GET /v1/sales/active.json?apikey=[redacted] HTTP/1.1" ';

describe("nginx's access log (deploy/nginx's flash_sale_api format)", () => {
  it.each([
    ['200 123 "-" "curl/8" rt=0.001 cache=HIT upstream=- key=demo', [1, 0, 0, 0, 0, 123]],
    ['304 0 "-" "curl/8" rt=0.001 cache=HIT upstream=- key=demo', [0, 1, 0, 0, 0, 0]],
    // served from the expired copy while one request fetches the new one: the API never saw it
    ['200 123 "-" "curl/8" rt=0.001 cache=UPDATING upstream=- key=demo', [1, 0, 0, 0, 0, 123]],
    // nginx's own 429 for a key over its rate
    ['429 99 "-" "curl/8" rt=0.000 cache=- upstream=- key=demo', [0, 0, 0, 1, 0, 99]],
    // a quote in the user agent, as nginx writes it
    ['200 5 "-" "a\\x22b" rt=0.001 cache=HIT upstream=- key=p.a1.k2', [1, 0, 0, 0, 0, 5]],
  ])("counts %s", (tail, counts) => {
    const m = new Meter("t", 100);
    expect(countNginxLine(REQUEST + tail, m, T)).toBe(true);
    expect(m.take()!.rows[0]).toMatchObject({ route: "sale_list", counts });
  });

  it.each([
    ["/v1/products/100001/detail.json", "product"],
    ["/v1/sales/women/winter-boots/detail.json", "sale_detail"],
    ["/v1/products", "search"],
    ["/v1/a path with spaces.json", "other"],
    ["/v1/usage.json", "usage"],
  ])("counts %s under the endpoint %s, as the servers do", (path, route) => {
    const m = new Meter("t", 100);
    const line = `127.0.0.1 - - [22/Nov/2026:17:00:00 +0000] "GET ${path}?q=a&apikey=[redacted] HTTP/2.0" 200 5 "-" "curl/8" rt=0.001 cache=HIT upstream=- key=demo`;
    expect(countNginxLine(line, m, T)).toBe(true);
    expect(m.take()!.rows[0]).toMatchObject({ key: "demo", route, counts: [1, 0, 0, 0, 0, 5] });
  });

  it.each([
    // the API answered these, and counted them
    '200 123 "-" "curl/8" rt=0.001 cache=MISS upstream=200 key=demo',
    '200 123 "-" "curl/8" rt=0.001 cache=EXPIRED upstream=200 key=demo',
    '304 0 "-" "curl/8" rt=0.001 cache=REVALIDATED upstream=304 key=demo',
    '429 99 "-" "curl/8" rt=0.001 cache=- upstream=429 key=demo',
    // no key passed the check
    '401 99 "-" "curl/8" rt=0.000 cache=HIT upstream=- key=-',
    "not a line of that format",
  ])("leaves %s", (tail) => {
    const m = new Meter("t", 100);
    expect(countNginxLine(REQUEST + tail, m, T)).toBe(false);
    expect(m.take()).toBeNull();
  });
});

describe("varnishncsa's lines (%{Varnish:handling}x %s %b %{VCL_Log:key}x %U)", () => {
  it.each([
    ["hit 200 123 demo /v1/sales/active.json", "sale_list", [1, 0, 0, 0, 0, 123]],
    ["hit 304 0 demo /v1/products/100001/detail.json", "product", [0, 1, 0, 0, 0, 0]],
    ["synth 429 99 demo /v1/products", "search", [0, 0, 0, 1, 0, 99]],
    ["hit 200 5 demo /v1/sales/%77omen/active.json", "sale_list", [1, 0, 0, 0, 0, 5]],
    ["hit 200 5 demo /v1/%zz", "other", [1, 0, 0, 0, 0, 5]],
    ["hit 200 5 demo", "other", [1, 0, 0, 0, 0, 5]],
  ])("counts %s under the endpoint %s", (line, route, counts) => {
    const m = new Meter("t", 100);
    expect(countCacheLine(line, m, T)).toBe(true);
    expect(m.take()!.rows[0]).toMatchObject({ route, counts });
  });

  it.each(["miss 200 123 demo", "pass 200 5 demo", "hit 401 99 -", "hit 401 99 ", "hit x 1 demo"])(
    "leaves %s",
    (line) => {
      const m = new Meter("t", 100);
      expect(countCacheLine(line, m, T)).toBe(false);
      expect(m.take()).toBeNull();
    },
  );
});
