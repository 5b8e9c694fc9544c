// The bytes of an event stream: a batch's frames for one group of streams (each event's id, type and data, `affid`
// spliced into the sale's links), rendered ahead of the instant but for the `sent` field, which is filled in as the
// batch goes out. A stream is sent them in one write: as one HTTP/1.1 chunk, or as they are (a view of the same bytes).
import type { SaleEvent } from "./schedule.ts";

/** A sale body as sent: its bytes and the offsets of its page links' closing quotes (where `&affid=` goes). */
export interface SaleBytes {
  identity: Buffer;
  links: readonly number[];
}

/** What one write sends a stream: its frames as one HTTP/1.1 chunk, and the same frames as they are (a view of it). */
export interface Bytes {
  chunked: Buffer;
  plain: Buffer;
}

/** Frames rendered but for `sent`: one chunk's bytes, with a placeholder at each offset of `sentAt`. */
export interface Template {
  bytes: Buffer;
  sentAt: readonly number[];
  /** The length of the chunk's size line (the frames as they are start there and end 2 bytes before the end). */
  head: number;
}

/** `sent` as every frame has it: RFC 3339 with ms, always this long (years 0000-9999). */
const SENT_LENGTH = "2000-01-01T00:00:00.000Z".length;
const PLACEHOLDER = "-".repeat(SENT_LENGTH);
const CRLF = Buffer.from("\r\n");

/** The frames of `events` (each read through `bytes`) with `affid`, but for their `sent`. */
export function renderTemplate(
  events: readonly SaleEvent[],
  bytes: (e: SaleEvent) => SaleBytes,
  affid: string,
): Template {
  const parts: Buffer[] = [];
  const sentAt: number[] = [];
  let length = 0;
  for (const e of events) {
    const head = Buffer.from(`id: ${e.id}\nevent: ${e.type}\ndata: {"sale":`);
    const sale = withAffid(bytes(e), affid);
    const at = `,"at":"${new Date(e.at * 1000).toISOString().replace(".000Z", "Z")}","sent":"`;
    sentAt.push(length + head.length + sale.length + at.length);
    const tail = Buffer.from(`${at}${PLACEHOLDER}"}\n\n`);
    parts.push(head, sale, tail);
    length += head.length + sale.length + tail.length;
  }
  const size = Buffer.from(`${length.toString(16)}\r\n`);
  return {
    bytes: Buffer.concat([size, ...parts, CRLF]),
    sentAt: sentAt.map((at) => at + size.length),
    head: size.length,
  };
}

/**
 * Fills `sent` (RFC 3339 with ms) into the template, in place: a template is filled once, and its bytes are then
 * written as they are.
 */
export function fill(t: Template, sent: string): Bytes {
  if (sent.length !== SENT_LENGTH) throw new Error(`sent must be ${SENT_LENGTH} characters: ${sent}`);
  for (const at of t.sentAt) t.bytes.write(sent, at, SENT_LENGTH, "latin1");
  return { chunked: t.bytes, plain: t.bytes.subarray(t.head, t.bytes.length - CRLF.length) };
}

/** The comment line every stream is sent every `heartbeatMs`. */
export const HEARTBEAT: Bytes = fill(
  { bytes: Buffer.from(`e\r\n: keep-alive\n\n\r\n`), sentAt: [], head: 3 },
  PLACEHOLDER,
);

/** The sale's JSON with `&affid=` in each page link. */
function withAffid({ identity, links }: SaleBytes, affid: string): Buffer {
  if (!affid || links.length === 0) return identity;
  const insert = Buffer.from(`&affid=${encodeURIComponent(affid)}`);
  const parts: Buffer[] = [];
  let from = 0;
  for (const at of links) {
    parts.push(identity.subarray(from, at), insert);
    from = at;
  }
  parts.push(identity.subarray(from));
  return Buffer.concat(parts);
}
