// The delivery path readied before a sale's instant. A fresh portal process would meet its first burst with cold
// code (V8 compiling, then running unoptimised, what renders, signs and reads each delivery) and every endpoint's
// secret still sealed. warmDeliveries unseals the enabled endpoints' secrets into the sender's cache, parses their
// URLs as a delivery does (the parsed URLs are kept), and runs the pure steps of a delivery (render, sign, write the
// request's bytes, read an answer) on made-up data WARM_ROUNDS times. It connects to nothing and sends nothing.
import type { PortalDatabase } from "../../db/database.ts";
import type { AddressGuard } from "./address-guard.ts";
import { AnswerReader } from "./answer-reader.ts";
import { enabledEndpoints } from "./endpoints.ts";
import { renderPayload } from "./payload.ts";
import { prepareRequest } from "./send.ts";
import { newWebhookSecret, signedHeaders } from "./signing.ts";

/** Times the pure steps run on made-up data. */
const WARM_ROUNDS = 300;

/** A made-up event and answer: a sale's event as the stream sends it, and a receiver's short 200. */
const EVENT = {
  id: "0.0.warm-up",
  type: "sale.begins",
  data: '{"sale":{"store":"women","sale_url":"https://shop.example.invalid/s?utm_source=api"},"at":"2026-01-01T00:00:00Z"}',
};
const ANSWER = Buffer.from(
  "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nDate: Thu, 01 Jan 2026 00:00:00 GMT\r\nConnection: keep-alive\r\n" +
    "Keep-Alive: timeout=5\r\nContent-Length: 2\r\n\r\nok",
  "latin1",
);

/**
 * Unseals the enabled endpoints' secrets (at most `max`) with `unseal` (the sender's cache), parses their URLs, and
 * rehearses a delivery's pure steps; resolves with the endpoints readied.
 */
export async function warmDeliveries(
  db: PortalDatabase,
  guard: AddressGuard,
  unseal: (endpointId: string, sealed: string) => string | null,
  max: number,
  now: number,
): Promise<number> {
  const endpoints = (await enabledEndpoints(db)).slice(0, max);
  const body = Buffer.from("{}");
  for (const e of endpoints) {
    unseal(e.id, e.secret);
    if (e.previous && e.previousUntil > now) unseal(e.id, e.previous);
    prepareRequest(e.url, {}, body, guard, true);
  }
  const secret = newWebhookSecret();
  for (let i = 0; i < WARM_ROUNDS; i++) {
    const payload = renderPayload(EVENT, i % 3 === 0 ? `warm${i}` : "", now);
    const headers = signedHeaders([secret], EVENT.id, Math.floor(now / 1000), payload);
    prepareRequest(`https://warm-up.example.invalid/${i % 7}`, headers, payload, guard, true);
    new AnswerReader().push(ANSWER);
  }
  return endpoints.length;
}
