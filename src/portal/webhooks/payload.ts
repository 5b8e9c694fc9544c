// A delivery's body: the Standard Webhooks payload `{"type","timestamp","data"}` whose `data` is the stream's `data`
// byte for byte, with the endpoint's affid spliced into the sale's page link (`sale_url`) as the API splices it
// (src/serve/events/frames.ts: `&affid=` before the link's closing quote), so one stream read serves every affid.
import type { StreamEvent } from "./queue.ts";

/** The largest body sent, bytes: an event whose body would be larger fails without being sent. */
export const MAX_BODY_BYTES = 256 * 1024;

/** `data` with `&affid=<affid>` at the end of its `sale_url` (unchanged without affid or link). */
export function withAffid(data: string, affid: string): string {
  const key = '"sale_url":"';
  const start = data.indexOf(key);
  if (!affid || start < 0) return data;
  let end = start + key.length;
  while (end < data.length && data[end] !== '"') end += data[end] === "\\" ? 2 : 1;
  return `${data.slice(0, end)}&affid=${encodeURIComponent(affid)}${data.slice(end)}`;
}

/** The body of a delivery of `event` to an endpoint with `affid`, read from the stream at `received` (ms). */
export function renderPayload(event: StreamEvent, affid: string, received: number): Buffer {
  const timestamp = new Date(received).toISOString();
  return Buffer.from(
    `{"type":${JSON.stringify(event.type)},"timestamp":"${timestamp}","data":${withAffid(event.data, affid)}}`,
  );
}
