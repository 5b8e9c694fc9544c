// The iCalendar feeds: checked by Debian's python3-icalendar (a parser nobody here wrote), with caching like the lists.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireProgram } from "../../../scripts/lib/test-programs.ts";
import { D, sale, standardCatalog, startTestApi, T0, withKey } from "../../helpers/fixture.ts";
import type { TestApi } from "../../helpers/fixture.ts";
import { clockScheduler } from "../../helpers/sse.ts";

const H = 3600;
const FEEDS = ["women", "men", "kids", "home"]
  .map((s) => `/v1/sales/${s}/upcoming.ics`)
  .concat("/v1/sales/upcoming.ics");
/** Debian's python3 (python3-icalendar is a Debian package; a python3 earlier on PATH may not see it). */
const PYTHON = existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
requireProgram("icalendar"); // npm test's first step installs python3-icalendar; named here if it could not

/** The feed as python3-icalendar reads it: each event's fields as strings. */
function parseWithIcalendar(ics: string): { name: string; refresh: string; events: Record<string, string>[] } {
  const script = `
import sys, json
try:
    import icalendar
except ImportError:
    sys.exit("python3-icalendar is missing: apt-get install python3-icalendar")
cal = icalendar.Calendar.from_ical(sys.stdin.buffer.read())
events = []
for e in cal.walk("VEVENT"):
    out = {}
    for k in ("UID", "SUMMARY", "DESCRIPTION", "URL"):
        if k in e: out[k] = str(e[k])
    for k in ("DTSTART", "DTEND", "DTSTAMP"):
        if k in e: out[k] = e.decoded(k).isoformat()
    events.append(out)
print(json.dumps({"name": str(cal.get("NAME")), "refresh": str(cal.get("REFRESH-INTERVAL")), "events": events}))
`;
  return JSON.parse(execFileSync(PYTHON, ["-c", script], { input: ics, encoding: "utf8" })) as ReturnType<
    typeof parseWithIcalendar
  >;
}

let api: TestApi;
beforeAll(async () => {
  const catalog = standardCatalog();
  catalog.sales.push(
    sale("linen", {
      store: "home",
      name: "Linen; sheets, towels",
      description: `Très doux, 100% linen; ${"washed and pre-shrunk, ".repeat(8)}\nSecond line.`,
      begins: new Date((T0 + 3 * H) * 1000).toISOString().replace(".000Z", "Z"),
      ends: new Date((T0 + 6 * H) * 1000).toISOString().replace(".000Z", "Z"),
    }),
  );
  api = await startTestApi(catalog);
});
afterAll(() => api.close());

describe("GET /v1/sales/upcoming.ics", () => {
  it("splices the longest affid into every URL as a continuation line: lines stay within 75 octets, URLs whole", async () => {
    api.clock.now = T0 + H;
    const affid = "a.b-c_d".repeat(9).slice(0, 64);
    const plain = await (await api.get(withKey(api, "/v1/sales/upcoming.ics"))).text();
    const res = await api.get(withKey(api, "/v1/sales/upcoming.ics", `affid=${affid}`));
    const ics = await res.text();
    for (const line of ics.split("\r\n")) expect(Buffer.byteLength(line)).toBeLessThanOrEqual(75);
    // The same feed once unfolded, but for the affid at the end of every URL.
    const unfold = (t: string) => t.replace(/\r\n /g, "");
    expect(unfold(ics)).toBe(unfold(plain).replace(/^(URL:.*)$/gm, `$1&affid=${affid}`));
    expect(res.headers.get("etag")).not.toBe(
      (await api.get(withKey(api, "/v1/sales/upcoming.ics"))).headers.get("etag"),
    );
    const cal = parseWithIcalendar(ics);
    for (const e of cal.events) expect(e.URL).toMatch(new RegExp(`&affid=${affid.replace(/\./g, "\\.")}$`));
  });

  it("is an RFC 5545 feed of the active and upcoming sales, read back by python3-icalendar", async () => {
    api.clock.now = T0 + H;
    const res = await api.get(withKey(api, "/v1/sales/upcoming.ics", "affid=partner7"));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/calendar; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("public, max-age=300");
    const ics = await res.text();
    expect(ics.endsWith("\r\n")).toBe(true);
    expect(ics.replace(/\r\n/g, "")).not.toMatch(/[\r\n]/);
    for (const line of ics.split("\r\n")) expect(Buffer.byteLength(line)).toBeLessThanOrEqual(75);
    const cal = parseWithIcalendar(ics);
    expect(cal.name).toBe("Flash sales");
    expect(cal.refresh).toBe("PT300S"); // RFC 7986: python3-icalendar 4 reads it as text
    // Active (newest first), then upcoming (soonest first); "rainy" ended at T0.
    expect(cal.events.map((e) => e.UID)).toEqual([
      "women-boots@api.example.test",
      "men-coats@api.example.test",
      "home-soon@api.example.test",
      "home-linen@api.example.test",
      "women-dresses@api.example.test",
    ]);
    const linen = cal.events[3]!;
    expect(linen.SUMMARY).toBe("Linen; sheets, towels");
    expect(linen.DESCRIPTION).toContain("Très doux, 100% linen; washed");
    expect(linen.DESCRIPTION).toContain("\nSecond line.");
    expect(linen.DTSTART).toBe("2026-11-22T20:00:00+00:00");
    expect(linen.DTEND).toBe("2026-11-22T23:00:00+00:00");
    expect(linen.URL).toMatch(/^https:\/\/www\.example-retailer\.com\/.*&affid=partner7$/);
    expect(cal.events[1]!.DTEND).toBeUndefined(); // coats is open-ended
  });

  it("has an ETag (304), a max-age capped at the next change, and per-store feeds", async () => {
    api.clock.now = T0 + 2 * H - 10;
    const res = await api.get(withKey(api, "/v1/sales/home/upcoming.ics"));
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("public, max-age=10");
    const etag = res.headers.get("etag")!;
    const cal = parseWithIcalendar(await res.text());
    expect(cal.name).toBe("Flash sales: home");
    expect(cal.events.map((e) => e.UID)).toEqual(["home-soon@api.example.test", "home-linen@api.example.test"]);
    const again = await api.get(withKey(api, "/v1/sales/home/upcoming.ics"), { headers: { "if-none-match": etag } });
    expect(again.status).toBe(304);
    const gz = await api.get(withKey(api, "/v1/sales/home/upcoming.ics"), { headers: { "accept-encoding": "gzip" } });
    expect(gz.status).toBe(200);
    api.clock.now = T0 + D + 1; // soon and linen have ended; dresses is active: the UIDs stay the same
    const later = parseWithIcalendar(await (await api.get(withKey(api, "/v1/sales/upcoming.ics"))).text());
    expect(later.events.map((e) => e.UID)).toContain("women-dresses@api.example.test");
    expect(later.events.map((e) => e.UID)).not.toContain("home-soon@api.example.test");
  });

  it("answers 404 for an unknown store and 401 without a key", async () => {
    const res = await api.get(withKey(api, "/v1/sales/shoes/upcoming.ics"));
    expect(res.status).toBe(404);
    expect(((await res.json()) as { detail: string }).detail).toContain("unknown store");
    expect((await api.get("/v1/sales/upcoming.ics")).status).toBe(401);
  });
});

describe("calendar feeds rendered ahead", () => {
  it("renders every feed when the snapshot loads and each change's next state after it: no request renders one", async () => {
    // The timers run on the handler's clock (the fixture's, made by startTestApi), T0 until then.
    const made: { api?: TestApi } = {};
    const clock = {
      get now() {
        return made.api ? made.api.clock.now : T0;
      },
      set now(v: number) {
        made.api!.clock.now = v;
      },
    };
    const timers = clockScheduler(clock);
    const ahead = (made.api = await startTestApi(standardCatalog(), { events: { scheduler: timers.scheduler } }));
    try {
      const follow = (t: number) => timers.advanceTo(t);
      const renders = () => ahead.handler.stats().calendars.renders;
      const askAll = async () => {
        for (const path of FEEDS) {
          expect((await ahead.get(withKey(ahead, path))).status).toBe(200);
          expect((await ahead.get(withKey(ahead, path, "affid=partner7"))).status).toBe(200);
        }
      };
      await ahead.handler.idle();
      const atLoad = renders();
      // Each feed now and in its next state.
      expect(atLoad).toBeGreaterThanOrEqual(FEEDS.length + 1);
      await askAll();
      expect(renders()).toBe(atLoad);
      // "soon" (home) begins at T0+2H: a request at the instant finds its feed rendered (at load, as the next state).
      follow(T0 + 2 * H);
      await askAll();
      expect(renders()).toBe(atLoad);
      // A few seconds on, the state after the next change ("soon" ends at T0+5H) is rendered, before it comes.
      follow(T0 + 2 * H + 5);
      await ahead.handler.idle();
      const ahead5 = renders();
      expect(ahead5).toBeGreaterThan(atLoad);
      follow(T0 + 5 * H);
      await askAll();
      expect(renders()).toBe(ahead5);
    } finally {
      await ahead.close();
    }
  });
});
