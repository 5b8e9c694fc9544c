// The bytes of an event stream: an event's frame (its id, type and data, `affid` spliced into the sale's links), made
// once per batch and affid, as it is and as an HTTP/1.1 chunk, so that writing it to a stream's socket is one write.
import type { SaleEvent } from "./schedule.ts";

/** A sale body as sent: its bytes and the offsets of its page links' closing quotes (where `&affid=` goes). */
export interface SaleBytes {
  identity: Buffer;
  links: readonly number[];
}

/** One batch's frames for one affid, as they are and as HTTP/1.1 chunks (each its own chunk). */
export interface Frames {
  plain: Buffer[];
  chunked: Buffer[];
  /** Every frame of the batch, concatenated (for the streams that want them all), made when first asked for. */
  all: { plain?: Buffer; chunked?: Buffer };
}

/** `frames` of the given sale bytes, sent at `sent` (RFC 3339 with ms). */
export function makeFrames(
  events: readonly SaleEvent[],
  bytes: (e: SaleEvent) => SaleBytes,
  affid: string,
  sent: string,
) {
  const plain = events.map((e) => frame(e, bytes(e), affid, sent));
  return { plain, chunked: plain.map(asChunk), all: {} };
}

const HEARTBEAT = Buffer.from(": keep-alive\n\n");
/** The comment line every stream is sent every `heartbeatMs`. */
export const HEARTBEAT_FRAMES: Frames = { plain: [HEARTBEAT], chunked: [asChunk(HEARTBEAT)], all: {} };

/** The bytes of the `chosen` frames (null: all) of a batch, chunked or not. */
export function bytesOf(frames: Frames, kind: "plain" | "chunked", chosen: readonly number[] | null): Buffer {
  const list = frames[kind];
  if (chosen === null) return list.length === 1 ? list[0]! : (frames.all[kind] ??= Buffer.concat(list));
  return chosen.length === 1 ? list[chosen[0]!]! : Buffer.concat(chosen.map((i) => list[i]!));
}

/** `data` as one chunk of an HTTP/1.1 chunked body: its size in hex, CRLF, the data, CRLF. */
function asChunk(data: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from("\r\n")]);
}

/** One event as the stream sends it. */
function frame(e: SaleEvent, sale: SaleBytes, affid: string, sent: string): Buffer {
  const head = `id: ${e.id}\nevent: ${e.type}\ndata: {"sale":`;
  const tail = `,"at":"${new Date(e.at * 1000).toISOString().replace(".000Z", "Z")}","sent":"${sent}"}\n\n`;
  return Buffer.concat([Buffer.from(head), withAffid(sale, affid), Buffer.from(tail)]);
}

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
