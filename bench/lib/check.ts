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
      res.on("error", reject);
      res.on("end", () => {
        const header = (name: string) => {
          const v = res.headers[name.toLowerCase()];
          return Array.isArray(v) ? v.join(", ") : v;
        };
        resolve({ status: res.statusCode ?? 0, rawHeaders: res.rawHeaders, header, body: Buffer.concat(chunks) });
      });
    });
    req.on("error", reject);
    req.setTimeout(30_000, () => req.destroy(new Error(`GET ${url}: timed out`)));
    req.end();
  });
}

/** Headers node:http sets by itself on every response: a server replaying a response must not send them twice. */
const AUTOMATIC = new Set(["date", "connection", "keep-alive", "transfer-encoding"]);

/** The response's headers minus the ones node:http adds itself, flat, for a bare server to send. */
export function replayableHeaders(res: RawResponse): string[] {
  return res.rawHeaders.flatMap((v, i, all) =>
    i % 2 === 0 && i + 1 < all.length && !AUTOMATIC.has(v.toLowerCase()) ? [v, all[i + 1]!] : [],
  );
}

/** A check of what a server sent failed: the benchmark stops, since it would measure the wrong thing. */
export class CheckError extends Error {
  override name = "CheckError";
}

/**
 * A benchmark's entry point: runs `main` and exits with the code it resolves with (0 all targets met, 2 some missed),
 * or 1 after logging why it failed (a failed check says so).
 */
export function runBench(main: () => Promise<number>, log: (message: string) => void): void {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      log(`${err instanceof CheckError ? "CHECK FAILED: " : ""}${(err as Error).message ?? String(err)}`);
      process.exit(1);
    },
  );
}

export function expect(ok: boolean, what: string): void {
  if (!ok) throw new CheckError(what);
}

/** A 200 with the expected Content-Encoding (none for identity). */
export function expectOk(res: RawResponse, who: string, encoding: "identity" | "br"): void {
  expect(res.status === 200, `${who}: status ${res.status}, expected 200: ${res.body.subarray(0, 300).toString()}`);
  const ce = res.header("content-encoding") ?? "identity";
  expect(ce === encoding, `${who}: Content-Encoding ${ce}, expected ${encoding}`);
}

export function expectSameBytes(a: Buffer, b: Buffer, what: string): void {
  expect(a.equals(b), `${what}: ${a.length} bytes vs ${b.length} bytes, not byte-identical`);
}

/** Polls until `get` returns a brotli 200 (the handler compresses composed lists in the background), for 20 s. */
export async function waitForBrotli(get: () => Promise<RawResponse>, who: string): Promise<RawResponse> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const res = await get();
    if (res.status === 200 && res.header("content-encoding") === "br") return res;
    if (Date.now() > deadline)
      throw new CheckError(
        `${who}: still no brotli body after 20 s (status ${res.status}, Content-Encoding ${res.header("content-encoding") ?? "none"})`,
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
