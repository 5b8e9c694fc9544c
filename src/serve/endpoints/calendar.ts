// GET /v1/sales/upcoming.ics and /v1/sales/<store>/upcoming.ics: an iCalendar feed (RFC 5545, RFC 7986's NAME and
// REFRESH-INTERVAL) of the upcoming and active sales, rendered once from the sale list bodies in force, affid spliced in.
import { createHash } from "node:crypto";
import { gzipSync } from "node:zlib";
import { splice } from "../../compress/assemble.ts";
import type { LoadedBlob } from "../../snapshot/load.ts";
import type { Representation } from "../bodies/response-body.ts";
import { sendRepresentation } from "../bodies/respond.ts";
import type { ResponderModule } from "../responder.ts";

/** Feeds kept, without affid (by list bodies, store and snapshot); the oldest is forgotten first. */
const CALENDAR_TEMPLATES = 32;
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

/**
 * A feed without affid, and where each URL line ends (byte offsets): an affid goes there as a continuation line
 * (`\r\n &affid=...`, at most 72 octets, so the folding stays within 75), spliced in rather than rendered again.
 */
interface CalendarTemplate {
  blob: LoadedBlob;
  urlEnds: number[];
}

/**
 * Renders and remembers feeds: `represent` is what the handler sends (ETag, max-age and compression as the lists).
 * A feed is rendered once per pair of list bodies (at 100,000 sample products, 80-100 ms); a feed with an affid is
 * that rendering with the affid spliced into its URL lines (a copy), so a new affid on every request costs a copy,
 * not a rendering, and is not kept.
 */
export function createCalendars() {
  const templates = new Map<string, CalendarTemplate>();
  let renders = 0;
  const templateOf = (
    lists: { active: LoadedBlob; upcoming: LoadedBlob },
    options: { store: string | null; builtAt: string; refreshSeconds: number },
  ): CalendarTemplate => {
    const key = [lists.active.hash, lists.upcoming.hash, options.store, options.builtAt].join("\0");
    let t = templates.get(key);
    if (!t) {
      const sales = [lists.active, lists.upcoming].flatMap(
        (b) => (JSON.parse(b.identity.toString("utf8")) as { sales: ListedSale[] }).sales,
      );
      const { text, urlEnds } = renderCalendar(sales, options);
      renders++;
      const identity = Buffer.from(text);
      t = { blob: blobOf(identity, createHash("sha256").update(identity).digest("hex").slice(0, 32)), urlEnds };
      if (templates.size >= CALENDAR_TEMPLATES) templates.delete(templates.keys().next().value!);
      templates.set(key, t);
    }
    return t;
  };
  return {
    represent(
      lists: { active: LoadedBlob; upcoming: LoadedBlob },
      options: { store: string | null; affid: string; builtAt: string; refreshSeconds: number },
    ): Representation {
      const t = templateOf(lists, options);
      if (!options.affid) {
        const made = t.blob;
        return {
          body: made,
          contentType: CALENDAR_TYPE,
          gzip: () => (made.gzip ??= gzipSync(made.identity)),
          brotli: null,
        };
      }
      // The affid is 1-64 characters of A-Za-z0-9_.- (checked by admission): nothing to encode.
      const identity = splice(t.blob.identity, t.urlEnds, Buffer.from(`\r\n &affid=${options.affid}`));
      const hash = createHash("sha256").update(`${t.blob.hash}\0${options.affid}`).digest("hex").slice(0, 32);
      // Sent as it is: gzip made per request would cost what the splice saves.
      return { body: blobOf(identity, hash), contentType: CALENDAR_TYPE, gzip: null, brotli: null };
    },
    /** Feeds kept (at most CALENDAR_TEMPLATES) and feeds rendered so far. */
    stats: () => ({ feeds: templates.size, renders }),
  };
}

/** A feed's bytes as the responder takes a body. */
const blobOf = (identity: Buffer, hash: string): LoadedBlob => ({
  hash,
  identity,
  gzip: null,
  br: null,
  links: [],
  gzipPieces: [],
  etags: null,
});

/**
 * The feed of `sales` (active then upcoming, as the lists order them): CRLF lines folded at 75 octets; with the byte
 * offset at which each URL line ends (before its CRLF).
 */
function renderCalendar(
  sales: readonly ListedSale[],
  { store, builtAt, refreshSeconds }: { store: string | null; builtAt: string; refreshSeconds: number },
): { text: string; urlEnds: number[] } {
  const name = store === null ? "Flash sales" : `Flash sales: ${store}`;
  const head = [
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
  let out = head.map(fold).join("\r\n") + "\r\n";
  let bytes = Buffer.byteLength(out);
  const urlEnds: number[] = [];
  for (const s of sales) {
    const before = [
      "BEGIN:VEVENT",
      `UID:${s.store}-${s.sale_key}@${new URL(s.sale).host}`,
      `DTSTAMP:${stamp}`,
      `DTSTART:${utc(s.begins)}`,
      ...(s.ends ? [`DTEND:${utc(s.ends)}`] : []),
      `SUMMARY:${text(s.name)}`,
      ...(s.description ? [`DESCRIPTION:${text(s.description)}`] : []),
      `URL:${s.sale_url}`,
    ]
      .map(fold)
      .join("\r\n");
    bytes += Buffer.byteLength(before);
    urlEnds.push(bytes);
    const after = "\r\nEND:VEVENT\r\n";
    bytes += Buffer.byteLength(after);
    out += before + after;
  }
  out += "END:VCALENDAR\r\n";
  return { text: out, urlEnds };
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

/** The calendar feeds' responder: the feed rendered ahead (calendar-feeds.ts), fresh until the next sale changes it. */
export const responder: ResponderModule["responder"] =
  ({ feeds }) =>
  (req, res, s, a, _info, headers, nowMs) => {
    const { rep, ttl } = feeds.answer(s.resources!, s.snapshot!, a!.path, a!.affid, nowMs);
    return sendRepresentation(req, res, rep, { ttl, headers, keyed: true });
  };
