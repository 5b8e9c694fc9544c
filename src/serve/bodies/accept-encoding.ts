// Accept-Encoding negotiation: brotli, then gzip, then identity, honouring q=0; what a header accepts is parsed once
// per distinct header, in a bounded map.

export type ContentEncoding = "br" | "gzip" | "identity";

const acceptCache = new Map<string, { br: boolean; gzip: boolean }>();
const CACHE_LIMIT = 512;
/** Longer headers are parsed each time, not kept: 512 of them at the 16 KB a header may have would hold 8 MB. */
const CACHED_HEADER_LENGTH = 256;

function parseAcceptEncoding(header: string): { br: boolean; gzip: boolean } {
  const accepted = { br: false, gzip: false };
  let star: boolean | null = null;
  const explicit = new Set<string>();
  for (const part of header.split(",")) {
    const [nameRaw = "", ...params] = part.split(";");
    const name = nameRaw.trim().toLowerCase();
    let q = 1;
    for (const p of params) {
      // A qvalue as RFC 9110 writes it (0 to 1, at most three decimals); anything else is ignored, as if absent.
      const m = /^\s*q\s*=\s*(0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?)\s*$/i.exec(p);
      if (m) q = Number(m[1]);
    }
    const ok = q > 0;
    if (name === "*") star = ok;
    else if (name === "br" || name === "gzip" || name === "x-gzip") {
      const key = name === "br" ? "br" : "gzip";
      explicit.add(key);
      accepted[key] = ok;
    }
  }
  if (star !== null) {
    if (!explicit.has("br")) accepted.br = star;
    if (!explicit.has("gzip")) accepted.gzip = star;
  }
  return accepted;
}

/** What an Accept-Encoding header accepts (parsed once per distinct header, in a bounded map). */
function accepts(header: string): { br: boolean; gzip: boolean } {
  if (header.length > CACHED_HEADER_LENGTH) return parseAcceptEncoding(header);
  let accepted = acceptCache.get(header);
  if (!accepted) {
    accepted = parseAcceptEncoding(header);
    if (acceptCache.size >= CACHE_LIMIT) acceptCache.clear();
    acceptCache.set(header, accepted);
  }
  return accepted;
}

/** Whether the request's Accept-Encoding accepts brotli. */
export function acceptsBrotli(header: string | undefined): boolean {
  return header !== undefined && header !== "" && accepts(header).br;
}

/** The encoding to send, given the request's Accept-Encoding and which variants the body has. */
export function negotiateEncoding(header: string | undefined, hasBr: boolean, hasGzip: boolean): ContentEncoding {
  if (!header || (!hasBr && !hasGzip)) return "identity";
  const accepted = accepts(header);
  if (hasBr && accepted.br) return "br";
  if (hasGzip && accepted.gzip) return "gzip";
  return "identity";
}
