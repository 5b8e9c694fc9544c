// GET /v1/sales/upcoming.ics and /v1/sales/<store>/upcoming.ics: an iCalendar feed (RFC 5545, RFC 7986's NAME and
// REFRESH-INTERVAL) of the upcoming and active sales, rendered from the sale list bodies in force, cached per bodies.
import { createHash } from "node:crypto";
import { gzipSync } from "node:zlib";
import type { LoadedBlob } from "../snapshot/load.ts";
import type { Representation } from "./response-body.ts";

/** Calendars kept (by list bodies, snapshot and affid); the oldest is forgotten first. */
const CALENDAR_CACHE_ENTRIES = 256;
const CALENDAR_TYPE = "text/calendar; charset=utf-8";

/** The two sale lists a feed path is made of: its store's (or every store's) active and upcoming lists. */
export function calendarLists(path: string): { active: string; upcoming: string; store: string | null } {
  const base = path.slice(0, -"upcoming.ics".length);
  const store = /^\/v1\/sales\/([^/]+)\/$/.exec(base)?.[1] ?? null;
  return { active: `${base}active.json`, upcoming: `${base}upcoming.json`, store };
}

interface ListedSale {
  name: string;
  sale: string;
  sale_key: string;
  store: string;
  sale_url: string;
  description?: string;
  begins: string;
  ends?: string;
}

/** Renders and remembers feeds: `represent` is what the handler sends (ETag, max-age and compression as the lists). */
export function createCalendars() {
  const cache = new Map<string, LoadedBlob>();
  return {
    represent(
      lists: { active: LoadedBlob; upcoming: LoadedBlob },
      options: { store: string | null; affid: string; builtAt: string; refreshSeconds: number },
    ): Representation {
      const key = [lists.active.hash, lists.upcoming.hash, options.store, options.affid, options.builtAt].join("\0");
      let blob = cache.get(key);
      if (!blob) {
        const sales = [lists.active, lists.upcoming].flatMap(
          (b) => (JSON.parse(b.identity.toString("utf8")) as { sales: ListedSale[] }).sales,
        );
        const identity = Buffer.from(renderCalendar(sales, options));
        blob = {
          hash: createHash("sha256").update(identity).digest("hex").slice(0, 32),
          identity,
          gzip: null,
          br: null,
          links: [],
          gzipPieces: [],
          etags: null,
        };
        if (cache.size >= CALENDAR_CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
        cache.set(key, blob);
      }
      const made = blob;
      return {
        body: made,
        contentType: CALENDAR_TYPE,
        gzip: () => (made.gzip ??= gzipSync(made.identity)),
        brotli: null,
      };
    },
  };
}

/** The feed of `sales` (active then upcoming, as the lists order them): CRLF lines folded at 75 octets. */
function renderCalendar(
  sales: readonly ListedSale[],
  {
    store,
    affid,
    builtAt,
    refreshSeconds,
  }: { store: string | null; affid: string; builtAt: string; refreshSeconds: number },
): string {
  const name = store === null ? "Flash sales" : `Flash sales: ${store}`;
  const lines = [
    "BEGIN:VCALENDAR",
    "VERSION:2.0",
    "PRODID:-//flash-sale-api//sales calendar 1//EN",
    "CALSCALE:GREGORIAN",
    "METHOD:PUBLISH",
    `NAME:${text(name)}`,
    `X-WR-CALNAME:${text(name)}`,
    `REFRESH-INTERVAL;VALUE=DURATION:PT${Math.max(60, refreshSeconds)}S`,
  ];
  const stamp = utc(builtAt);
  for (const s of sales) {
    const url = affid ? `${s.sale_url}&affid=${encodeURIComponent(affid)}` : s.sale_url;
    lines.push(
      "BEGIN:VEVENT",
      `UID:${s.store}-${s.sale_key}@${new URL(s.sale).host}`,
      `DTSTAMP:${stamp}`,
      `DTSTART:${utc(s.begins)}`,
      ...(s.ends ? [`DTEND:${utc(s.ends)}`] : []),
      `SUMMARY:${text(s.name)}`,
      ...(s.description ? [`DESCRIPTION:${text(s.description)}`] : []),
      `URL:${url}`,
      "END:VEVENT",
    );
  }
  lines.push("END:VCALENDAR");
  return lines.map(fold).join("\r\n") + "\r\n";
}

/** An RFC 3339 UTC timestamp as an iCalendar UTC DATE-TIME: 20261122T170000Z. */
function utc(rfc3339: string): string {
  return new Date(rfc3339)
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d{3}/, "");
}

/** A TEXT value, escaped (RFC 5545 section 3.3.11). */
function text(value: string): string {
  return value.replace(/[\\;,]/g, (c) => `\\${c}`).replace(/\r\n|\r|\n/g, "\\n");
}

/** A content line folded into lines of at most 75 octets (continuations begin with a space), never inside a character. */
function fold(line: string): string {
  const bytes = Buffer.from(line);
  if (bytes.length <= 75) return line;
  const out: string[] = [];
  let start = 0;
  let limit = 75;
  while (start < bytes.length) {
    let end = Math.min(bytes.length, start + limit);
    // Back off to the start of a UTF-8 sequence (continuation bytes are 10xxxxxx).
    while (end < bytes.length && (bytes[end]! & 0xc0) === 0x80) end--;
    out.push(bytes.subarray(start, end).toString("utf8"));
    start = end;
    limit = 74; // the leading space counts
  }
  return out.join("\r\n ");
}
