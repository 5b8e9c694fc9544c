// HTTPS: the server with a certificate answers over TLS with HSTS on every response, refuses plain HTTP, and takes a
// renewed certificate and key without a restart and without a failed request; a half-written renewal keeps the old pair.
import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { readFile, rename, writeFile } from "node:fs/promises";
import { get as httpGet } from "node:http";
import type { IncomingHttpHeaders } from "node:http";
import { Agent, request as httpsRequest } from "node:https";
import { connect as tcpConnect } from "node:net";
import { join } from "node:path";
import { connect as tlsConnect } from "node:tls";
import type { TLSSocket } from "node:tls";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireProgram } from "../../../scripts/lib/test-programs.ts";
import { HSTS, SERVER_NODE_FLAGS, startServer } from "../../../src/serve/http/server.ts";
import type { RunningServer } from "../../../src/serve/http/server.ts";
import { createTlsWatcher, loadTlsPair } from "../../../src/serve/http/tls.ts";
import type { CertificateInfo, TlsFiles, TlsPair } from "../../../src/serve/http/tls.ts";
import { startTestApi, tempDir, withKey } from "../../helpers/fixture.ts";
import type { TestApi } from "../../helpers/fixture.ts";

const REPO = fileURLToPath(new URL("../../..", import.meta.url));
const run = promisify(execFile);
// Installed by npm test's first step; if it is missing, the file fails naming it.
const OPENSSL = requireProgram("openssl");

interface PemPair {
  cert: Buffer;
  key: Buffer;
  serial: string;
}

/** A self-signed certificate for 127.0.0.1 (valid 2 days) and its key, made by openssl in `dir` under `name`. */
async function makePair(dir: string, name: string): Promise<PemPair> {
  const certFile = join(dir, `${name}.crt`);
  const keyFile = join(dir, `${name}.key`);
  await run(OPENSSL, [
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
    keyFile,
    "-out",
    certFile,
  ]);
  const { stdout } = await run(OPENSSL, ["x509", "-noout", "-serial", "-in", certFile]);
  return {
    cert: await readFile(certFile),
    key: await readFile(keyFile),
    serial: stdout
      .trim()
      .replace(/^serial=/, "")
      .toUpperCase(),
  };
}

/** Replaces a file the way an atomic renewal does: written beside it, renamed over it. */
async function replaceFile(path: string, data: Buffer): Promise<void> {
  await writeFile(`${path}.new`, data);
  await rename(`${path}.new`, path);
}

/** Polls `condition` every 10 ms until it holds, failing after `ms`. */
async function waitFor(condition: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  socket: TLSSocket;
}

let root: string;
let a: PemPair;
let b: PemPair;
let ca: Buffer[];
let api: TestApi;

beforeAll(async () => {
  root = await tempDir("fsa-tls-");
  [a, b] = await Promise.all([makePair(root, "first"), makePair(root, "second")]);
  expect(a.serial).not.toBe(b.serial);
  ca = [a.cert, b.cert];
  api = await startTestApi();
}, 60_000);
afterAll(async () => {
  await api.close();
});

/** A GET (or other method) over HTTPS, checking the server's certificate against both test certificates. */
function get(
  port: number,
  path: string,
  options: { agent?: Agent | false; method?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: "127.0.0.1",
        port,
        path,
        method: options.method ?? "GET",
        headers: options.headers,
        agent: options.agent ?? false,
        ca,
      },
      (res) => {
        let body = "";
        const socket = res.socket as TLSSocket; // a keep-alive agent takes it back once the response has ended
        res.setEncoding("utf8");
        res.on("data", (c: string) => (body += c));
        res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body, socket }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end();
  });
}

/** The serial number of the certificate a new TLS connection is shown. */
function peerSerial(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: "127.0.0.1", port, ca }, () => {
      resolve(socket.getPeerCertificate().serialNumber);
      socket.end();
    });
    socket.on("error", reject);
  });
}

/** Bytes written to a new TLS connection; everything the server sent back until it closed the connection. */
function rawTls(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = "";
    const socket = tlsConnect({ host: "127.0.0.1", port, ca }, () => socket.write(bytes));
    socket.setEncoding("utf8");
    socket.on("data", (c: string) => (out += c));
    socket.on("end", () => resolve(out));
    socket.on("error", reject);
  });
}

/** The https.Server of a server started with `tls`. */
function httpsOf(running: RunningServer) {
  if (!("setSecureContext" in running.server)) throw new Error("not an HTTPS server");
  return running.server;
}

async function withTlsServer(pair: PemPair, body: (server: RunningServer) => Promise<void>): Promise<void> {
  const server = await startServer(api.handler, "127.0.0.1", 0, { tls: pair });
  try {
    await body(server);
  } finally {
    await server.close();
  }
}

describe("HTTPS", () => {
  it("answers over TLS with Strict-Transport-Security on every response, errors included", async () => {
    await withTlsServer(a, async ({ port }) => {
      const ok = await get(port, withKey(api, "/v1/sales/active.json"));
      expect(ok.status).toBe(200);
      expect(ok.headers["strict-transport-security"]).toBe(HSTS);
      expect(HSTS).toBe("max-age=31536000");
      expect(ok.socket.getPeerCertificate().serialNumber).toBe(a.serial);
      expect(ok.socket.alpnProtocol).toBe(false); // HTTP/1.1 only: no ALPN, no h2
      const cases: [string, number, { method?: string; headers?: Record<string, string> }?][] = [
        [withKey(api, "/v1/sales/active.json"), 304, { headers: { "If-None-Match": ok.headers.etag! } }],
        ["/v1/sales/active.json", 401],
        [withKey(api, "/v1/nothing.json"), 404],
        [withKey(api, "/v1/sales/active.json"), 405, { method: "POST" }],
        ["/healthz", 200],
      ];
      for (const [path, status, options] of cases) {
        const res = await get(port, path, options);
        expect([path, res.status, res.headers["strict-transport-security"]]).toEqual([path, status, HSTS]);
      }
      // Responses written straight to the socket: CONNECT, an unparsable request, an Expect node refuses.
      const connect = await rawTls(port, "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n");
      expect(connect).toMatch(/^HTTP\/1\.1 405 /);
      expect(connect).toContain(`Strict-Transport-Security: ${HSTS}\r\n`);
      const garbage = await rawTls(port, "GET / HTTP/1.1\r\nHost 127.0.0.1\r\n\r\n");
      expect(garbage).toMatch(/^HTTP\/1\.1 400 /);
      expect(garbage).toContain(`Strict-Transport-Security: ${HSTS}\r\n`);
      const expect417 = await rawTls(
        port,
        "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: tea\r\nConnection: close\r\n\r\n",
      );
      expect(expect417).toMatch(/^HTTP\/1\.1 417 /);
      expect(expect417.toLowerCase()).toContain(`strict-transport-security: ${HSTS}\r\n`);
    });
  });

  it("sends no Strict-Transport-Security over plain HTTP", async () => {
    const res = await api.get(withKey(api, "/v1/sales/active.json"));
    expect(res.status).toBe(200);
    expect(res.headers.get("strict-transport-security")).toBeNull();
    expect((await api.get("/v1/sales/active.json")).headers.get("strict-transport-security")).toBeNull();
  });

  it("refuses plain HTTP on the TLS port, and keeps serving HTTPS", async () => {
    await withTlsServer(a, async ({ port }) => {
      const plain = new Promise<number>((resolve, reject) => {
        const req = httpGet(
          { host: "127.0.0.1", port, path: withKey(api, "/v1/sales/active.json"), agent: false },
          (res) => resolve(res.statusCode!),
        );
        req.on("error", reject);
      });
      await expect(plain).rejects.toThrow();
      expect((await get(port, "/healthz")).status).toBe(200);
    });
  });

  it("closes a connection that never finishes its handshake after headersTimeout (node's default is 120 s)", async () => {
    const server = await startServer(api.handler, "127.0.0.1", 0, { tls: a, headersTimeout: 300 });
    const socket = tcpConnect(server.port, "127.0.0.1");
    try {
      await once(socket, "connect");
      const opened = Date.now();
      await Promise.race([once(socket, "close"), waitFor(() => false, 5_000, "the server to close the connection")]);
      expect(Date.now() - opened).toBeGreaterThanOrEqual(250);
    } finally {
      socket.destroy();
      await server.close();
    }
  });

  it("keeps the keep-alive, timeout and connection rules (a request past the limit closes the connection)", async () => {
    const server = await startServer(api.handler, "127.0.0.1", 0, { tls: a, maxRequestsPerSocket: 2 });
    const agent = new Agent({ keepAlive: true, maxSockets: 1, ca });
    try {
      const first = await get(server.port, "/healthz", { agent });
      expect(first.headers.connection).toBe("keep-alive");
      expect(first.headers["keep-alive"]).toBe("timeout=5");
      const second = await get(server.port, "/healthz", { agent });
      expect(second.socket).toBe(first.socket);
      expect(second.headers.connection).toBe("close");
      expect(server.server.headersTimeout).toBe(10_000);
      expect(server.server.requestTimeout).toBe(15_000);
      expect(server.server.maxConnections).toBe(16_384);
    } finally {
      agent.destroy();
      await server.close();
    }
  });
});

describe("certificate renewal", () => {
  /** The certificate and key files a server is started from, holding `pair`. */
  async function filesWith(pair: PemPair, name: string): Promise<TlsFiles> {
    const files = { cert: join(root, `${name}-live.crt`), key: join(root, `${name}-live.key`) };
    await writeFile(files.cert, pair.cert);
    await writeFile(files.key, pair.key);
    return files;
  }

  it("a swap under load: no failed request, new connections get the new certificate, an open keep-alive connection keeps working", async () => {
    const files = await filesWith(a, "load");
    const loaded = await loadTlsPair(files);
    const server = await startServer(api.handler, "127.0.0.1", 0, { tls: loaded });
    const reloads: CertificateInfo[] = [];
    const errors: string[] = [];
    const watcher = createTlsWatcher(files, loaded, httpsOf(server), {
      interval: 3_600_000, // driven by check()
      onReload: (c) => reloads.push(c),
      onError: (err) => errors.push((err as Error).message),
    });
    const keepAlive = new Agent({ keepAlive: true, maxSockets: 4, ca });
    const held = new Agent({ keepAlive: true, maxSockets: 1, ca });
    const failures: string[] = [];
    const serials = { keepAlive: new Set<string>(), fresh: new Set<string>() };
    let requests = 0;
    let done = false;
    const deadline = Date.now() + 60_000; // the loops stop by themselves even if the test fails before `done`
    const loop = async (agent: Agent | false, seen: Set<string>) => {
      while (!done && Date.now() < deadline) {
        try {
          const res = await get(server.port, withKey(api, "/v1/sales/active.json"), { agent });
          if (res.status !== 200 || res.headers["strict-transport-security"] !== HSTS)
            failures.push(`status ${res.status}`);
          seen.add(res.socket.getPeerCertificate().serialNumber);
          requests++;
        } catch (err) {
          failures.push((err as Error).message);
        }
      }
    };
    try {
      const before = await get(server.port, "/healthz", { agent: held });
      expect(before.socket.getPeerCertificate().serialNumber).toBe(a.serial);
      const loops = [
        loop(keepAlive, serials.keepAlive),
        loop(keepAlive, serials.keepAlive),
        loop(false, serials.fresh),
        loop(false, serials.fresh),
      ];
      await waitFor(() => requests >= 50, 30_000, "requests before the renewal");

      // Half-way: the new certificate is in place, its key not yet. The old pair stays, reported once.
      await replaceFile(files.cert, b.cert);
      await watcher.check();
      expect(errors).toHaveLength(1);
      expect(errors[0]).toContain("key values mismatch");
      expect(reloads).toEqual([]);
      await watcher.check();
      expect(errors).toHaveLength(1);
      expect(await peerSerial(server.port)).toBe(a.serial);

      // The key follows: the new pair is used for new handshakes.
      const mark = requests;
      await replaceFile(files.key, b.key);
      await watcher.check();
      expect(reloads.map((c) => c.serialNumber)).toEqual([b.serial]);
      expect(reloads[0]!.subject).toContain("O=second");
      expect(await peerSerial(server.port)).toBe(b.serial);
      await waitFor(() => requests >= mark + 50 && serials.fresh.has(b.serial), 30_000, "requests after the renewal");

      // The connection opened before the renewal still answers, on the certificate it was opened with.
      const after = await get(server.port, "/healthz", { agent: held });
      expect(after.status).toBe(200);
      expect(after.socket).toBe(before.socket);
      expect(after.socket.getPeerCertificate().serialNumber).toBe(a.serial);

      done = true;
      await Promise.all(loops);
      expect(failures).toEqual([]);
      expect(serials.fresh).toEqual(new Set([a.serial, b.serial]));
      expect(serials.keepAlive.has(a.serial)).toBe(true);
      expect(errors).toHaveLength(1);
    } finally {
      done = true;
      watcher.stop();
      keepAlive.destroy();
      held.destroy();
      await server.close();
    }
  }, 120_000);

  it.each<[string, (files: TlsFiles) => Promise<void>, string]>([
    ["a new certificate with the old key", (f) => replaceFile(f.cert, b.cert), "key values mismatch"],
    ["a key cut short", (f) => replaceFile(f.key, b.key.subarray(0, 200)), "TLS certificate"],
    ["an empty certificate", (f) => replaceFile(f.cert, Buffer.alloc(0)), "no start line"],
    ["a missing key", (f) => rename(f.key, `${f.key}.gone`), "ENOENT"],
  ])("%s keeps the old pair and is reported once", async (_name, damage, message) => {
    const files = await filesWith(a, "half");
    const loaded: TlsPair = await loadTlsPair(files);
    const server = await startServer(api.handler, "127.0.0.1", 0, { tls: loaded });
    const errors: string[] = [];
    const reloads: string[] = [];
    const watcher = createTlsWatcher(files, loaded, httpsOf(server), {
      interval: 3_600_000,
      onReload: (c) => reloads.push(c.serialNumber),
      onError: (err) => errors.push((err as Error).message),
    });
    try {
      await damage(files);
      await watcher.check();
      await watcher.check();
      expect(errors).toHaveLength(1);
      expect(errors[0]).toContain(message);
      expect(reloads).toEqual([]);
      expect(await peerSerial(server.port)).toBe(a.serial);
      expect((await get(server.port, "/healthz")).status).toBe(200);
      // The renewal completed: picked up on the next look.
      await replaceFile(files.cert, b.cert);
      await replaceFile(files.key, b.key);
      await watcher.check();
      expect(reloads).toEqual([b.serial]);
      expect(await peerSerial(server.port)).toBe(b.serial);
    } finally {
      watcher.stop();
      await server.close();
    }
  });

  it("a pair that does not match fails at start-up, naming both files", async () => {
    const files = await filesWith(a, "boot");
    await writeFile(files.key, b.key);
    await expect(loadTlsPair(files)).rejects.toThrow(`TLS certificate ${files.cert} and key ${files.key}: `);
  });
});

describe("npm run serve with TLS_CERT and TLS_KEY", () => {
  it("serves HTTPS, picks up a renewal within seconds, and stops on SIGTERM", async () => {
    const files = { cert: join(root, "cli.crt"), key: join(root, "cli.key") };
    await writeFile(files.cert, a.cert);
    await writeFile(files.key, a.key);
    const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, "--import", "tsx", "src/cli/serve.ts"], {
      cwd: REPO,
      env: {
        ...process.env,
        DATA_DIR: api.dataDir,
        KEYS_FILE: api.keysFile,
        PORT: "0",
        HOST: "127.0.0.1",
        BASE_URL: "",
        LOG_REQUESTS: "0",
        TLS_CERT: files.cert,
        TLS_KEY: files.key,
      },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    try {
      const port = await new Promise<number>((resolve, reject) => {
        child.stderr.on("data", (c: Buffer) => {
          stderr += c.toString();
          const m = /listening on \w+:\/\/127\.0\.0\.1:(\d+)/.exec(stderr);
          if (m) resolve(Number(m[1]));
        });
        child.once("exit", (code) => reject(new Error(`server exited (${code}): ${stderr}`)));
      });
      expect(stderr).toContain(`serial ${a.serial}`);
      const res = await get(port, "/healthz");
      expect(res.status).toBe(200);
      expect(res.headers["strict-transport-security"]).toBe(HSTS);
      expect(res.socket.getPeerCertificate().serialNumber).toBe(a.serial);
      await replaceFile(files.key, b.key);
      await replaceFile(files.cert, b.cert);
      await waitFor(async () => (await peerSerial(port)) === b.serial, 15_000, "the renewed certificate");
      expect(stderr).toContain(`now using TLS certificate`);
      child.kill("SIGTERM");
      const [code] = (await once(child, "exit")) as [number | null];
      expect(code).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  }, 60_000);
});
