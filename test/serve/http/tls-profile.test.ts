// The server's TLS settings (TLS_SERVER_OPTIONS, Mozilla's "intermediate" profile), as the real `openssl s_client`
// sees them: TLS 1.0 and 1.1 refused, over TLS 1.2 only forward-secret AEAD suites, TLS 1.3 accepted; and the same
// after a certificate renewal (setSecureContext). A refusal is asserted as the server's: the alert it sent.
import { execFile, spawn } from "node:child_process";
import { readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer } from "../../../src/serve/http/server.ts";
import type { RunningServer } from "../../../src/serve/http/server.ts";
import { createTlsWatcher, loadTlsPair } from "../../../src/serve/http/tls.ts";
import type { TlsFiles } from "../../../src/serve/http/tls.ts";
import { startTestApi, tempDir } from "../../helpers/fixture.ts";
import type { TestApi } from "../../helpers/fixture.ts";

const run = promisify(execFile);

/** What one `openssl s_client` handshake reported. */
interface Handshake {
  /** "TLSv1.2", ... when the handshake completed; null when it did not. */
  protocol: string | null;
  cipher: string | null;
  /** The TLS alert the server sent, by number (40 handshake_failure, 70 protocol_version), when it refused. */
  alert: number | null;
  output: string;
}

/**
 * One handshake with `openssl s_client` (`-brief`: it reports the protocol and suite, or the alert it received).
 * `@SECLEVEL=0` lets Debian's openssl offer what its defaults would not (TLS 1.0 and 1.1, SHA-1 suites), so that a
 * refusal is the server's.
 */
function handshake(port: number, version: string, cipher: string | null): Promise<Handshake> {
  const args = ["s_client", "-brief", "-connect", `127.0.0.1:${port}`, version];
  if (cipher && version === "-tls1_3") args.push("-ciphersuites", cipher);
  else args.push("-cipher", `${cipher ?? "DEFAULT"}@SECLEVEL=0`);
  return new Promise((resolve, reject) => {
    const child = spawn("openssl", args, { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (c: Buffer) => (output += c.toString()));
    child.stderr.on("data", (c: Buffer) => (output += c.toString()));
    child.on("error", reject);
    child.on("close", () => {
      const established = output.includes("CONNECTION ESTABLISHED");
      resolve({
        protocol: established ? (/Protocol version: (\S+)/.exec(output)?.[1] ?? null) : null,
        cipher: established ? (/Ciphersuite: (\S+)/.exec(output)?.[1] ?? null) : null,
        alert: Number(/SSL alert number (\d+)/.exec(output)?.[1] ?? NaN) || null,
        output,
      });
    });
  });
}

/** A self-signed RSA certificate for 127.0.0.1 and its key, written by openssl to `<name>.crt` and `<name>.key`. */
async function makeFiles(dir: string, name: string): Promise<TlsFiles> {
  const files = { cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`) };
  await run("openssl", [
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-subj",
    `/CN=127.0.0.1/O=${name}`,
    "-addext",
    "subjectAltName=IP:127.0.0.1",
    "-days",
    "2",
    "-keyout",
    files.key,
    "-out",
    files.cert,
  ]);
  return files;
}

/** [what is tried, s_client's version flag, the suite offered (null: openssl's whole default list)]. */
type Case = [string, string, string | null];

const REFUSED: Case[] = [
  ["TLS 1.0", "-tls1", null],
  ["TLS 1.1", "-tls1_1", null],
  ["TLS 1.2, static RSA with AES-GCM (no forward secrecy)", "-tls1_2", "AES128-GCM-SHA256"],
  ["TLS 1.2, static RSA with AES-CBC and SHA-1", "-tls1_2", "AES256-SHA"],
  ["TLS 1.2, ECDHE with AES-CBC and SHA-1", "-tls1_2", "ECDHE-RSA-AES128-SHA"],
  ["TLS 1.2, ECDHE with AES-CBC and SHA-256", "-tls1_2", "ECDHE-RSA-AES128-SHA256"],
];
const ACCEPTED: Case[] = [
  ["TLS 1.2, ECDHE with AES-128-GCM", "-tls1_2", "ECDHE-RSA-AES128-GCM-SHA256"],
  ["TLS 1.2, ECDHE with AES-256-GCM", "-tls1_2", "ECDHE-RSA-AES256-GCM-SHA384"],
  ["TLS 1.2, ECDHE with ChaCha20-Poly1305", "-tls1_2", "ECDHE-RSA-CHACHA20-POLY1305"],
  ["TLS 1.3, default suites", "-tls1_3", null],
  ["TLS 1.3, AES-128-GCM", "-tls1_3", "TLS_AES_128_GCM_SHA256"],
  ["TLS 1.3, ChaCha20-Poly1305", "-tls1_3", "TLS_CHACHA20_POLY1305_SHA256"],
];

/** Every case against the server on `port`: the refused ones end in the server's alert, the others complete. */
async function checkProfile(port: number): Promise<void> {
  for (const [what, version, cipher] of REFUSED) {
    const h = await handshake(port, version, cipher);
    // 70 protocol_version for an old protocol, 40 handshake_failure for a suite it will not use.
    expect([what, h.protocol, h.alert], h.output).toEqual([what, null, version === "-tls1_2" ? 40 : 70]);
  }
  for (const [what, version, cipher] of ACCEPTED) {
    const h = await handshake(port, version, cipher);
    expect([what, h.protocol], h.output).toEqual([what, version === "-tls1_3" ? "TLSv1.3" : "TLSv1.2"]);
    if (cipher) expect(h.cipher).toBe(cipher);
  }
}

let dir: string;
let api: TestApi;
let first: TlsFiles;
let second: TlsFiles;

beforeAll(async () => {
  dir = await tempDir("fsa-tls-profile-");
  [first, second] = await Promise.all([makeFiles(dir, "first"), makeFiles(dir, "second")]);
  api = await startTestApi();
}, 60_000);
afterAll(async () => {
  await api.close();
});

describe("TLS settings (Mozilla intermediate)", () => {
  it("refuses TLS 1.0/1.1 and suites without forward secrecy or AEAD; accepts ECDHE AEAD over TLS 1.2, and TLS 1.3", async () => {
    const server = await startServer(api.handler, "127.0.0.1", 0, { tls: await loadTlsPair(first) });
    try {
      await checkProfile(server.port);
    } finally {
      await server.close();
    }
  }, 60_000);

  it("keeps them after a certificate renewal", async () => {
    const files = { cert: join(dir, "live.crt"), key: join(dir, "live.key") };
    await writeFile(files.cert, await readFile(first.cert));
    await writeFile(files.key, await readFile(first.key));
    const pair = await loadTlsPair(files);
    const server: RunningServer = await startServer(api.handler, "127.0.0.1", 0, { tls: pair });
    if (!("setSecureContext" in server.server)) throw new Error("not an HTTPS server");
    const renewed: string[] = [];
    const watcher = createTlsWatcher(files, pair, server.server, {
      interval: 3_600_000, // driven by check()
      onReload: (c) => renewed.push(c.subject),
    });
    try {
      for (const [from, to] of [
        [second.key, files.key],
        [second.cert, files.cert],
      ] as const) {
        await writeFile(`${to}.new`, await readFile(from));
        await rename(`${to}.new`, to);
      }
      await watcher.check();
      expect(renewed).toHaveLength(1);
      expect(renewed[0]).toContain("O=second");
      await checkProfile(server.port);
    } finally {
      watcher.stop();
      await server.close();
    }
  }, 60_000);
});
