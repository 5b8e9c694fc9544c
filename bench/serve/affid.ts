// The serve benchmark's affid cases: a resource asked for with a new affid on every request (a wrk Lua script), checked
// before anything is measured, and compared with the same resource without affid from the same handler.
import { CheckError, decodeBody, expect, waitForBrotli } from "./check.ts";
import type { RawResponse } from "./check.ts";

/** The two ways the handler is asked for a resource in an affid case. */
export type AffidMode = "affid" | "plain";

/** What the client offers: what a browser or CDN sends, and no Accept-Encoding at all. */
const ENCODINGS = [
  { name: "br, gzip", acceptEncoding: "br, gzip" },
  { name: "identity", acceptEncoding: null },
] as const;

/** The resources, by label stem; the path is filled in from the snapshot. */
const RESOURCES = ["sale list", "product"] as const;
type Resource = (typeof RESOURCES)[number];

/** Every affid case's label, in the order they are measured (for --cases and the run-time estimate). */
export const AFFID_LABELS: readonly string[] = ENCODINGS.flatMap((e) => RESOURCES.map((r) => affidLabel(r, e.name)));

function affidLabel(resource: Resource, encoding: string): string {
  return `${resource} + new affid (${encoding})`;
}

export interface AffidCase {
  label: string;
  /** The resource path, without query. */
  path: string;
  headers: Record<string, string>;
  /** The Accept-Encoding sent, or null for none. */
  acceptEncoding: string | null;
  /** The handler's answer to the same request without affid, and its body decoded. */
  plain: RawResponse;
  plainIdentity: Buffer;
  /** Problems that do not make the measurement meaningless (an uncompressed answer to a client that offered br and gzip). */
  problems: string[];
  /** What the checks saw, for the report. */
  checkNote: string;
}

/** A request target's query for `key`, with `affid` when given. */
const target = (path: string, key: string, affid?: string) => `${path}?apikey=${key}${affid ? `&affid=${affid}` : ""}`;

/** Requests checked per case before measuring, each with its own new affid. */
const CHECKS_PER_CASE = 3;

/**
 * Builds the affid cases `wanted` selects, each checked through `get` (a GET on the handler): the plain answer is a 200
 * in the encoding the client asked for; each answer with a new affid is a 200 whose body, decoded per its
 * Content-Encoding, is valid JSON equal to the plain body except for `&affid=<value>` inserted into every page link.
 */
export async function prepareAffidCases(
  paths: Record<Resource, string>,
  key: string,
  get: (target: string, headers: Record<string, string>) => Promise<RawResponse>,
  wanted: (label: string) => boolean,
): Promise<AffidCase[]> {
  const cases: AffidCase[] = [];
  const stamp = Date.now().toString(36);
  for (const enc of ENCODINGS) {
    for (const resource of RESOURCES) {
      const label = affidLabel(resource, enc.name);
      if (!wanted(label)) continue;
      const path = paths[resource];
      const headers: Record<string, string> = enc.acceptEncoding ? { "Accept-Encoding": enc.acceptEncoding } : {};
      // A composed sale list is compressed in the background at start-up: wait for its brotli body.
      const plain = enc.acceptEncoding
        ? await waitForBrotli(() => get(target(path, key), headers), `${label}: plain`)
        : await get(target(path, key), headers);
      expect(plain.status === 200, `${label}: plain: status ${plain.status}, expected 200`);
      const plainIdentity = decodeBody(plain, `${label}: plain`).identity;
      const seen: string[] = [];
      const uncompressed: number[] = [];
      for (let i = 0; i < CHECKS_PER_CASE; i++) {
        const affid = `chk${i}-${stamp}`;
        const who = `${label}: affid=${affid}`;
        const res = await get(target(path, key, affid), headers);
        expect(
          res.status === 200,
          `${who}: status ${res.status}, expected 200: ${res.body.subarray(0, 300).toString()}`,
        );
        const { encoding, identity } = decodeBody(res, who);
        seen.push(encoding);
        if (!enc.acceptEncoding)
          expect(encoding === "identity", `${who}: Content-Encoding ${encoding} without Accept-Encoding`);
        else if (encoding === "identity") uncompressed.push(identity.length);
        const links = expectAffidBody(identity, plainIdentity, affid, who);
        if (i === 0) seen.unshift(`${links} page links`);
      }
      const problems = uncompressed.length
        ? [
            `${uncompressed.length} of ${CHECKS_PER_CASE} new affids came uncompressed (${uncompressed[0]} bytes) to Accept-Encoding: ${enc.acceptEncoding}`,
          ]
        : [];
      cases.push({
        label,
        path,
        headers,
        acceptEncoding: enc.acceptEncoding,
        plain,
        plainIdentity,
        problems,
        checkNote: `${seen[0]}; ${CHECKS_PER_CASE} new affids came ${seen.slice(1).join(", ")}`,
      });
    }
  }
  return cases;
}

/** Page links carry the retailer's tracking parameters (contract section 4); API links do not. */
const isPageLink = (s: string) => s.includes("utm_medium=");

/**
 * `body` (decoded) is valid JSON and equals `plain` byte for byte once every `&affid=<affid>` is taken out; each page
 * link carries it exactly once and nothing else changed. Returns the number of page links.
 */
export function expectAffidBody(body: Buffer, plain: Buffer, affid: string, who: string): number {
  const insert = `&affid=${affid}`;
  const text = body.toString();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new CheckError(`${who}: body is not valid JSON: ${(err as Error).message}`);
  }
  const inserted = text.split(insert).length - 1;
  expect(
    text.split(insert).join("") === plain.toString(),
    `${who}: body with the ${inserted} "${insert}" taken out differs from the plain body (${body.length} vs ${plain.length} bytes)`,
  );
  let links = 0;
  const walk = (a: unknown, p: unknown, at: string): void => {
    if (typeof p === "string") {
      expect(typeof a === "string", `${who}: ${at} is not a string`);
      if (isPageLink(p)) {
        links++;
        expect(
          (a as string).split(insert).length === 2 && (a as string).replace(insert, "") === p,
          `${who}: page link ${at} is ${JSON.stringify(a)}, expected ${JSON.stringify(p)} with ${insert} once`,
        );
      } else expect(a === p, `${who}: ${at} changed: ${JSON.stringify(a)}, plain ${JSON.stringify(p)}`);
    } else if (p !== null && typeof p === "object") {
      expect(
        a !== null && typeof a === "object" && Array.isArray(a) === Array.isArray(p),
        `${who}: ${at} is not the same kind of value`,
      );
      const keys = Object.keys(p);
      expect(keys.length === Object.keys(a as object).length, `${who}: ${at} has other fields than the plain body's`);
      for (const k of keys) walk((a as Record<string, unknown>)[k], (p as Record<string, unknown>)[k], `${at}.${k}`);
    } else expect(a === p, `${who}: ${at} changed`);
  };
  walk(json, JSON.parse(plain.toString()), "$");
  expect(links > 0, `${who}: the plain body has no page links (no utm_medium=): nothing for affid to change`);
  expect(inserted === links, `${who}: "${insert}" appears ${inserted} times, the body has ${links} page links`);
  return links;
}

/**
 * A wrk script that asks for `path?apikey=key` with `&affid=<prefix><n>` (n counting from 1) when `affidPrefix` is
 * given (a new target every request; the prefix must be new for every wrk run, or a run would repeat the last one's),
 * else the same target every time (prepared once). Either way it tallies the Content-Encoding of the responses and
 * prints `ENCODINGS br=N gzip=N identity=N other=N` at the end (see parseEncodings), so that both modes pay for the
 * same script.
 */
export function renderAffidScript(path: string, key: string, affidPrefix: string | null): string {
  const base = JSON.stringify(target(path, key) + (affidPrefix ? `&affid=${affidPrefix}` : ""));
  return `-- generated by bench/serve/affid.ts
local base = ${base}
local n = 0
local prepared = nil
n_br, n_gzip, n_identity, n_other = 0, 0, 0, 0
request = function()
${affidPrefix ? "  n = n + 1\n  return wrk.format(nil, base .. n)" : "  if not prepared then prepared = wrk.format(nil, base) end\n  return prepared"}
end
response = function(status, headers, body)
  local ce = headers["Content-Encoding"] or headers["content-encoding"]
  if ce == nil then n_identity = n_identity + 1
  elseif ce == "br" then n_br = n_br + 1
  elseif ce == "gzip" then n_gzip = n_gzip + 1
  else n_other = n_other + 1 end
end
local threads = {}
setup = function(thread) table.insert(threads, thread) end
done = function(summary, latency, requests)
  local t = { br = 0, gzip = 0, identity = 0, other = 0 }
  for _, th in ipairs(threads) do
    for k, v in pairs(t) do t[k] = v + (th:get("n_" .. k) or 0) end
  end
  io.write(string.format("ENCODINGS br=%d gzip=%d identity=%d other=%d\\n", t.br, t.gzip, t.identity, t.other))
end
`;
}

/** The tally renderAffidScript's script prints, or null when wrk's output has none. */
export function parseEncodings(raw: string): Record<"br" | "gzip" | "identity" | "other", number> | null {
  const m = /^ENCODINGS br=(\d+) gzip=(\d+) identity=(\d+) other=(\d+)$/m.exec(raw);
  return m ? { br: Number(m[1]), gzip: Number(m[2]), identity: Number(m[3]), other: Number(m[4]) } : null;
}
