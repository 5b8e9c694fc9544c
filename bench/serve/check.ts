// Fetching raw responses (no automatic decompression) and checking the benchmarked bodies before anything is measured.
import { request } from "node:http";
import { brotliDecompressSync, gunzipSync } from "node:zlib";

export interface RawResponse {
  status: number;
  /** Headers as sent, flat: [name, value, ...]. */
  rawHeaders: string[];
  header(name: string): string | undefined;
  body: Buffer;
}

/** GET `url` with `headers`, returning the body bytes exactly as sent (a new connection each time). */
export function httpGet(url: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "GET", headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          rawHeaders: res.rawHeaders,
          header: (name) => {
            const v = res.headers[name.toLowerCase()];
            return Array.isArray(v) ? v.join(", ") : v;
          },
          body: Buffer.concat(chunks),
        }),
      );
      res.on("error", reject);
    });
    req.on("error", reject);
    req.setTimeout(30_000, () => req.destroy(new Error(`GET ${url}: timed out`)));
    req.end();
  });
}

/** Headers node:http sets by itself on every response: the bare server must not send them twice. */
const AUTOMATIC = new Set(["date", "connection", "keep-alive", "transfer-encoding"]);

/** The response's headers minus the ones node:http adds itself, flat, for the bare server to send. */
export function replayableHeaders(res: RawResponse): string[] {
  const out: string[] = [];
  for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) {
    if (!AUTOMATIC.has(res.rawHeaders[i]!.toLowerCase())) out.push(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
  }
  return out;
}

export class CheckError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CheckError";
  }
}

export function expect(ok: boolean, what: string): void {
  if (!ok) throw new CheckError(what);
}

/** A 200 with the expected Content-Encoding (none for identity). */
export function expectOk(res: RawResponse, who: string, encoding: "identity" | "br"): void {
  expect(res.status === 200, `${who}: status ${res.status}, expected 200: ${res.body.subarray(0, 300).toString()}`);
  const ce = res.header("content-encoding");
  if (encoding === "br") expect(ce === "br", `${who}: Content-Encoding ${ce ?? "(none)"}, expected br`);
  else expect(ce === undefined || ce === "identity", `${who}: Content-Encoding ${ce}, expected none`);
}

/** The brotli body decodes to exactly `identity`. */
export function expectBrotliOf(br: Buffer, identity: Buffer, who: string): void {
  let decoded: Buffer;
  try {
    decoded = brotliDecompressSync(br);
  } catch (err) {
    throw new CheckError(`${who}: brotli body does not decode: ${(err as Error).message}`);
  }
  expect(
    decoded.equals(identity),
    `${who}: brotli body decodes to ${decoded.length} bytes that differ from the identity body (${identity.length} bytes)`,
  );
}

export function expectSameBytes(a: Buffer, b: Buffer, what: string): void {
  expect(a.equals(b), `${what}: ${a.length} bytes vs ${b.length} bytes, not byte-identical`);
}

/** Polls until `get` returns a brotli response (the handler compresses composed lists in the background). */
export async function waitForBrotli(
  get: () => Promise<RawResponse>,
  who: string,
  timeoutMs = 20_000,
): Promise<RawResponse> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await get();
    if (res.status === 200 && res.header("content-encoding") === "br") return res;
    if (Date.now() > deadline)
      throw new CheckError(
        `${who}: still no brotli body after ${timeoutMs / 1000} s (status ${res.status}, Content-Encoding ${res.header("content-encoding") ?? "none"})`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The body as sent, decoded by its Content-Encoding (br, gzip or none), with the encoding it came in. */
export function decodeBody(res: RawResponse, who: string): { encoding: "br" | "gzip" | "identity"; identity: Buffer } {
  const ce = res.header("content-encoding") ?? "identity";
  if (ce !== "br" && ce !== "gzip" && ce !== "identity")
    throw new CheckError(`${who}: unexpected Content-Encoding ${ce}`);
  try {
    return {
      encoding: ce,
      identity: ce === "br" ? brotliDecompressSync(res.body) : ce === "gzip" ? gunzipSync(res.body) : res.body,
    };
  } catch (err) {
    throw new CheckError(`${who}: ${ce} body does not decode: ${(err as Error).message}`);
  }
}
