// The webhooks forms: a new endpoint (URL, event types, stores, affid) and a replay's range, parsed and checked; the
// URL also against the address guard (its address now; it is checked again at each connection).
import { isIP } from "node:net";
import { z } from "zod";
import type { FieldErrors } from "../forms.ts";
import { parseForm } from "../forms.ts";
import type { AddressGuard } from "./address-guard.ts";
import { EVENT_TYPES } from "./endpoints.ts";

/** The longest URL accepted. */
const MAX_URL = 2000;
/** The most stores one endpoint names. */
const MAX_STORES = 50;

const EndpointSchema = z.object({
  url: z
    .string("URL is required")
    .trim()
    .min(1, "URL is required")
    .max(MAX_URL, `URL must be at most ${MAX_URL} characters`)
    .refine((v) => URL.canParse(v), "Enter a URL such as https://example.com/webhooks"),
  stores: z
    .string()
    .default("")
    .transform((v) => [...new Set(v.split(/[\s,]+/).filter(Boolean))])
    .refine((v) => v.length <= MAX_STORES, `At most ${MAX_STORES} stores`)
    .refine(
      (v) => v.every((s) => /^[a-z0-9][a-z0-9_-]{0,63}$/.test(s)),
      "Store keys are lowercase letters, digits, - and _",
    ),
  affid: z
    .string()
    .trim()
    .default("")
    .refine((v) => v === "" || /^[A-Za-z0-9_.-]{1,64}$/.test(v), "An affid is 1-64 characters of A-Z a-z 0-9 _ . -"),
});

/** A new endpoint's fields, as the form sent them. */
export interface EndpointFields {
  url: string;
  types: string[];
  stores: string[];
  affid: string;
}

/** Why the URL may not be sent to (scheme, credentials, address), or null. */
async function urlRefusal(guard: AddressGuard, text: string): Promise<string | null> {
  const url = new URL(text);
  const plain = url.protocol === "http:";
  if (!plain && url.protocol !== "https:") return "The URL must start with https://";
  if (url.username || url.password) return "The URL must not hold a user name or password";
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  if (isIP(host)) {
    const refused = guard.refusal(host, plain);
    return refused ? `Refused: ${refused}` : null;
  }
  return new Promise((resolve) =>
    guard.lookup(plain)(host, { all: true }, (err) =>
      resolve(err ? err.message.replace(/^refused: /, "Refused: ") : null),
    ),
  );
}

/** The new endpoint's fields, or the message for each that is wrong. */
export async function parseEndpointForm(
  guard: AddressGuard,
  body: Record<string, unknown>,
): Promise<{ ok: true; data: EndpointFields } | { ok: false; errors: FieldErrors }> {
  const form = parseForm(EndpointSchema, body);
  if (!form.ok) return form;
  const refused = await urlRefusal(guard, form.data.url);
  if (refused) return { ok: false, errors: { url: refused } };
  const types = EVENT_TYPES.filter((t) => body[t] === "on");
  return { ok: true, data: { ...form.data, types: types.length === EVENT_TYPES.length ? [] : types } };
}

/** A `datetime-local` value (UTC) as ms, or NaN. */
const utcMs = (v: unknown) =>
  typeof v === "string" && /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d)?$/.test(v) ? Date.parse(`${v}Z`) : NaN;

/** A replay's range, in ms, or the message. */
export function parseRange(body: Record<string, unknown>): { from: number; to: number } | { error: string } {
  const [from, to] = [utcMs(body.from), utcMs(body.to)];
  if (Number.isNaN(from) || Number.isNaN(to)) return { error: "Enter both times, such as 2026-11-22T17:00" };
  if (from > to) return { error: "The range must start before it ends" };
  return { from, to: to + 59_999 };
}
