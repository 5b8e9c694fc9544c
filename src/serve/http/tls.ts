// TLS certificate and key: loaded as a checked pair at start-up, then watched so a renewal is used without a restart.
import { X509Certificate } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import { createSecureContext } from "node:tls";
import type { SecureContextOptions } from "node:tls";

/**
 * The TLS settings of every HTTPS server here (the API's, and a developer portal's when it serves HTTPS itself):
 * Mozilla's "intermediate" profile ("Intermediate compatibility (recommended)" at
 * https://wiki.mozilla.org/Security/Server_Side_TLS, as https://ssl-config.mozilla.org/ generates it), for clients
 * of the last ten years or so:
 * - TLS 1.2 at least (named here, not left to node's default, which `--tls-min-v1.0` or a library changing
 *   `tls.DEFAULT_MIN_VERSION` would lower for the whole process);
 * - over TLS 1.2, only ECDHE key exchange (forward secrecy) with AEAD ciphers (AES-GCM, ChaCha20-Poly1305): node's
 *   default list also let a client choose static-RSA suites (AES128-GCM-SHA256, AES256-SHA) and CBC with SHA-1;
 * - TLS 1.3 with OpenSSL's default suites (all AEAD and forward-secret): the list names none of them, so node leaves
 *   them as they are;
 * - the profile's DHE-RSA suites are left out: they need finite-field parameters (`dhparam`), which are not set;
 * - key-exchange groups and cipher order stay node's defaults (`ecdhCurve: "auto"`, the client's order), which the
 *   profile allows, so a node built with post-quantum hybrid groups offers them.
 * Pass it wherever a secure context is made: at start-up, and to `setSecureContext` on renewal (which otherwise falls
 * back to node's defaults).
 */
export const TLS_SERVER_OPTIONS: Readonly<Pick<SecureContextOptions, "minVersion" | "ciphers">> = Object.freeze({
  minVersion: "TLSv1.2",
  ciphers: [
    "ECDHE-ECDSA-AES128-GCM-SHA256",
    "ECDHE-RSA-AES128-GCM-SHA256",
    "ECDHE-ECDSA-AES256-GCM-SHA384",
    "ECDHE-RSA-AES256-GCM-SHA384",
    "ECDHE-ECDSA-CHACHA20-POLY1305",
    "ECDHE-RSA-CHACHA20-POLY1305",
  ].join(":"),
});

/** How often the certificate and key files are looked at, ms. */
const DEFAULT_TLS_CHECK_INTERVAL = 2_000;

/** Paths of the PEM files. */
export interface TlsFiles {
  /** The certificate, followed by any intermediate certificates. */
  cert: string;
  /** The private key of the certificate (unencrypted). */
  key: string;
}

/** A certificate and its private key, known to parse and to belong together. */
export interface TlsPair {
  cert: Buffer;
  key: Buffer;
  /** The files' state (mtime, size, inode of each) seen before they were read. */
  stamp: string;
}

/** What a log line says about a certificate. */
export interface CertificateInfo {
  subject: string;
  serialNumber: string;
  validTo: string;
  fingerprint256: string;
}

/** The files' mtime, size and inode ("" for one that cannot be stat'ed); stat follows symlinks (certbot's live/). */
async function stampOf(files: TlsFiles): Promise<string> {
  const one = (path: string) =>
    stat(path).then(
      (s) => `${s.mtimeMs}:${s.size}:${s.ino}`,
      () => "",
    );
  return `${await one(files.cert)}|${await one(files.key)}`;
}

/**
 * Reads the certificate and key and checks that they make a TLS context with TLS_SERVER_OPTIONS (both parse and the
 * key is the certificate's); throws naming both files otherwise.
 */
export async function loadTlsPair(files: TlsFiles): Promise<TlsPair> {
  return readPair(files, await stampOf(files));
}

async function readPair(files: TlsFiles, stamp: string): Promise<TlsPair> {
  try {
    const [cert, key] = await Promise.all([readFile(files.cert), readFile(files.key)]);
    createSecureContext({ ...TLS_SERVER_OPTIONS, cert, key });
    return { cert, key, stamp };
  } catch (err) {
    throw new Error(`TLS certificate ${files.cert} and key ${files.key}: ${(err as Error).message}`, { cause: err });
  }
}

/** The subject, serial number, expiry and SHA-256 fingerprint of a pair's (first) certificate. */
export function describeCertificate(pair: TlsPair): CertificateInfo {
  const x = new X509Certificate(pair.cert);
  return { subject: x.subject, serialNumber: x.serialNumber, validTo: x.validTo, fingerprint256: x.fingerprint256 };
}

export interface TlsWatcher {
  /** Looks at the files once now; resolves when any swap it started has finished. */
  check(): Promise<void>;
  stop(): void;
}

export interface TlsWatcherOptions {
  /** Polling interval, ms. Default 2 000 (DEFAULT_TLS_CHECK_INTERVAL). */
  interval?: number;
  /** Called after a new pair was put in use. */
  onReload?: (cert: CertificateInfo) => void;
  /** Called once for each state of the files that does not make a pair (the old pair stays in use). */
  onError?: (err: unknown) => void;
}

/**
 * Polls the two files (a stat each) and, when either changed and both parse as a matching pair, gives the new pair
 * with TLS_SERVER_OPTIONS to `target.setSecureContext` (a `tls.Server`'s: it applies to new handshakes; open
 * connections keep theirs).
 * A renewal caught half-way (a new certificate with the old key) keeps the old pair and is reported once; the
 * write of the other file changes the files again and is picked up on the next look.
 */
export function createTlsWatcher(
  files: TlsFiles,
  current: TlsPair,
  target: { setSecureContext(options: SecureContextOptions): void },
  options: TlsWatcherOptions = {},
): TlsWatcher {
  let seen = current.stamp;
  let running: Promise<void> | null = null;
  const check = () =>
    (running ??= (async () => {
      const stamp = await stampOf(files);
      if (stamp === seen) return;
      seen = stamp; // a failure is not retried (nor logged again) until the files change
      try {
        const pair = await readPair(files, stamp);
        target.setSecureContext({ ...TLS_SERVER_OPTIONS, cert: pair.cert, key: pair.key });
        options.onReload?.(describeCertificate(pair));
      } catch (err) {
        options.onError?.(err);
      }
    })().finally(() => {
      running = null;
    }));
  const timer = setInterval(() => void check(), options.interval ?? DEFAULT_TLS_CHECK_INTERVAL);
  timer.unref();
  return { check, stop: () => clearInterval(timer) };
}
