// The event stream's frames (src/serve/events/frames.ts): rendered ahead with `sent` left open, filled in place,
// one HTTP/1.1 chunk holding every frame of a write, and the same frames as they are.
import { describe, expect, it } from "vitest";
import { fill, HEARTBEAT, renderTemplate } from "../../../src/serve/events/frames.ts";
import type { SaleEvent } from "../../../src/serve/events/schedule.ts";

const sale = (key: string) => {
  const identity = Buffer.from(`{"sale_key":"${key}","sale_url":"https://shop.example/s/${key}?ref=api"}`);
  return { identity, links: [identity.indexOf('"}')] };
};
const event = (key: string, type: SaleEvent["type"], at: number): SaleEvent =>
  ({ id: `${at}.1.${key.padEnd(16, "x")}`, type, pos: at, at, store: "home", key }) as SaleEvent;

/** The chunk's size line and data, and the frames' id, event and data, as a reader sees them. */
function read(chunk: Buffer) {
  const text = chunk.toString("latin1");
  const size = parseInt(text.slice(0, text.indexOf("\r\n")), 16);
  const data = text.slice(text.indexOf("\r\n") + 2);
  expect(data.endsWith("\r\n")).toBe(true);
  const frames = data
    .slice(0, -2)
    .split("\n\n")
    .filter(Boolean)
    .map((f) =>
      Object.fromEntries(f.split("\n").map((l) => [l.slice(0, l.indexOf(":")), l.slice(l.indexOf(":") + 2)])),
    );
  return { size, length: Buffer.byteLength(data) - 2, frames };
}

describe("frames", () => {
  it.each([
    { affid: "", events: [event("soon", "sale.begins", 1_800_000_000)] },
    {
      affid: "partner 7&co",
      events: [event("old", "sale.ends", 1_800_000_000), event("new", "sale.begins", 1_800_000_000)],
    },
  ])("renders $events.length frame(s) with affid '$affid', `sent` filled in at send time", ({ affid, events }) => {
    const t = renderTemplate(events, (e) => sale(e.key), affid);
    const sent = "2027-01-15T08:00:00.042Z";
    const bytes = fill(t, sent);
    const { size, length, frames } = read(bytes.chunked);
    expect(size).toBe(length);
    expect(bytes.plain.toString("latin1")).toBe(bytes.chunked.toString("latin1").slice(t.head, -2));
    expect(frames.map((f) => [f.id, f.event])).toEqual(events.map((e) => [e.id, e.type]));
    for (const [i, f] of frames.entries()) {
      const data = JSON.parse(f.data!) as { sale: { sale_key: string; sale_url: string }; at: string; sent: string };
      expect(data.sale.sale_key).toBe(events[i]!.key);
      expect(data.sale.sale_url).toBe(
        `https://shop.example/s/${events[i]!.key}?ref=api${affid ? `&affid=${encodeURIComponent(affid)}` : ""}`,
      );
      expect(data.at).toBe("2027-01-15T08:00:00Z");
      expect(data.sent).toBe(sent);
    }
  });

  it("takes only an RFC 3339 time with ms as `sent`, and sends the heartbeat as a comment", () => {
    const t = renderTemplate([event("soon", "sale.begins", 1_800_000_000)], (e) => sale(e.key), "");
    expect(() => fill(t, "2027-01-15T08:00:00Z")).toThrow(/sent/);
    expect(HEARTBEAT.plain.toString()).toBe(": keep-alive\n\n");
    expect(read(HEARTBEAT.chunked).size).toBe(HEARTBEAT.plain.length);
  });
});
