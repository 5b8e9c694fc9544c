// One zod schema over environment and flags -> typed Config, parsed once by the CLI.
import { availableParallelism } from "node:os";
import { resolve } from "node:path";
import { z } from "zod";
import { LOOPBACK_PROXIES, parseProxyEntry } from "./serve/proxies.ts";
import {
  DEFAULT_BODY_CACHE_MB,
  DEFAULT_COMPRESS_SLOTS,
  DEFAULT_MAX_AGE,
  DEFAULT_VARIANT_CACHE_MB,
} from "./serve/defaults.ts";

export const DEFAULT_PORT = 8080;
export const DEFAULT_HOST = "127.0.0.1";
export const DEFAULT_DATA_DIR = "data";

/**
 * A number written in decimal digits (a sign and decimals are read so that their errors say what is wrong). Anything
 * else, such as 0x50, 1e3 or Infinity, which z.coerce would read as a number, is refused as not a number.
 */
const decimal = (schema: z.ZodNumber) =>
  z.preprocess(
    (v) => (typeof v === "string" && !/^\s*[+-]?\d+(\.\d+)?\s*$/.test(v) ? Number.NaN : v),
    z.coerce.number().pipe(schema),
  );
const Port = decimal(z.number().int().min(0).max(65535));

export const ConfigSchema = z
  .object({
    /** Where snapshots are published (`current`, `snapshots/`, `blobs/`). Env DATA_DIR. Default ./data. */
    dataDir: z.string().min(1).default(DEFAULT_DATA_DIR),
    /** The API keys file. Env KEYS_FILE. Default <dataDir>/keys.json. */
    keysFile: z.string().min(1).optional(),
    /** Env PORT. Default 8080. */
    port: Port.default(DEFAULT_PORT),
    /** Env HOST. Default 127.0.0.1. */
    host: z.string().min(1).default(DEFAULT_HOST),
    /** API base URL written into `sale`/`product` links. Env BASE_URL. Default http://HOST:PORT (https:// with TLS). */
    baseUrl: z
      .url({ protocol: /^https?$/ })
      .refine(
        (u) => !/[?#@]/.test(u),
        "must have no query (?), fragment (#) or credentials (@): links are made by appending paths",
      )
      .optional(),
    /** Freshness in seconds for responses that do not change sooner. Env MAX_AGE. Default 300. */
    maxAge: decimal(z.number().int().min(0).max(86_400)).default(DEFAULT_MAX_AGE),
    /** One JSON log line per request on stdout. Env LOG_REQUESTS ("0" turns it off). Default on. */
    logRequests: z
      .enum(["0", "1"])
      .default("1")
      .transform((v) => v === "1"),
    /** Start without a snapshot and answer 503 until one is published. Env WAIT_FOR_SNAPSHOT ("1"). Default off: fail at start-up. */
    waitForSnapshot: z
      .enum(["0", "1"])
      .default("0")
      .transform((v) => v === "1"),
    /**
     * Proxies whose X-Forwarded-For names the client, for the failed-authentication limit: comma-separated addresses
     * and CIDR networks, or `loopback` (a proxy on this machine); from any other peer the header is ignored. Env
     * TRUST_PROXY. Default `0`: none. `1` (which trusted the header from any peer) is refused with a message.
     */
    trustProxy: z
      .string()
      .default("0")
      .transform((v, ctx) => {
        const entries = v
          .split(",")
          .map((e) => e.trim())
          .filter(Boolean);
        if (entries.length === 1 && entries[0] === "0") return [];
        const out: string[] = [];
        for (const e of entries) {
          if (e === "1") {
            ctx.addIssue({
              code: "custom",
              message:
                "TRUST_PROXY=1 trusted X-Forwarded-For from any peer, so a client could name any address; list the proxies instead (addresses or CIDR networks, comma-separated), e.g. TRUST_PROXY=loopback or TRUST_PROXY=10.0.0.0/8",
            });
            return z.NEVER;
          }
          if (e === "loopback") out.push(...LOOPBACK_PROXIES);
          else if (parseProxyEntry(e)) out.push(e);
          else {
            ctx.addIssue({
              code: "custom",
              message: `${JSON.stringify(e)} is not an address or CIDR network (e.g. 10.0.0.5, 10.0.0.0/8, fd00::/8, loopback)`,
            });
            return z.NEVER;
          }
        }
        return out;
      }),
    /** PEM certificate (chain) file: the server speaks HTTPS; set with tlsKey. Env TLS_CERT. Default none: plain HTTP. */
    tlsCert: z.string().optional(),
    /** PEM private key file of tlsCert. Env TLS_KEY. */
    tlsKey: z.string().optional(),
    /** Memory for cached affid/JSONP variants, MB. Env VARIANT_CACHE_MB. Default 32. */
    variantCacheMb: decimal(z.number().int().min(0).max(4096)).default(DEFAULT_VARIANT_CACHE_MB),
    /** Memory for resource bodies read from the packs, MB. Env BODY_CACHE_MB. Default 1024. */
    bodyCacheMb: decimal(
      z
        .number()
        .int()
        .min(1)
        .max(1024 * 1024),
    ).default(DEFAULT_BODY_CACHE_MB),
    /** Bodies brotli-compressed in the background at once (sale lists, popular variants). Env COMPRESS_SLOTS. Default 2. */
    compressSlots: decimal(z.number().int().min(0).max(64)).default(DEFAULT_COMPRESS_SLOTS),
    /** Server processes on the one port (node:cluster): a number, or "auto" for one per core. Env WORKERS. Default 1. */
    workers: z
      .union([z.literal("auto"), decimal(z.number().int().min(1).max(256))])
      .default(1)
      .transform((v) => (v === "auto" ? availableParallelism() : v)),
    /** Per-key and failed-authentication limits shared by every process using this Redis (redis:// or rediss://). Env REDIS_URL. Default none: limits per process. */
    redisUrl: z.url({ protocol: /^rediss?$/, error: "must be a redis:// or rediss:// URL" }).optional(),
    /** Turns metrics on: GET /metrics for `Authorization: Bearer <token>` only. Env METRICS_TOKEN (16+ characters). Default off. */
    metricsToken: z.string().min(16, "must be at least 16 characters").optional(),
  })
  .superRefine((c, ctx) => {
    if ((c.tlsCert === undefined) !== (c.tlsKey === undefined)) {
      ctx.addIssue({
        code: "custom",
        path: [c.tlsCert === undefined ? "tlsCert" : "tlsKey"],
        message: "TLS_CERT and TLS_KEY must both be set, or neither",
      });
    }
  });

export interface Config {
  dataDir: string;
  keysFile: string;
  port: number;
  host: string;
  baseUrl: string;
  maxAge: number;
  logRequests: boolean;
  waitForSnapshot: boolean;
  /** Proxies (addresses, CIDR networks) whose X-Forwarded-For names the client; empty: none. */
  trustProxy: readonly string[];
  /** Certificate and key files (absolute), or null for plain HTTP. */
  tls: { cert: string; key: string } | null;
  metricsToken: string | undefined;
  /** Redis for limits shared across processes and machines, or undefined for limits per process. */
  redisUrl: string | undefined;
  /** Server processes (node:cluster workers); 1 runs the server in this process. */
  workers: number;
  variantCacheBytes: number;
  bodyCacheBytes: number;
  compressSlots: number;
}

/** Parses the environment (and overrides from flags) into a Config; throws with every problem listed. */
export function parseConfig(
  env: Record<string, string | undefined>,
  overrides: Partial<Record<keyof z.input<typeof ConfigSchema>, string>> = {},
): Config {
  const raw = {
    dataDir: env.DATA_DIR,
    keysFile: env.KEYS_FILE,
    port: env.PORT,
    host: env.HOST,
    baseUrl: env.BASE_URL,
    maxAge: env.MAX_AGE,
    logRequests: env.LOG_REQUESTS,
    waitForSnapshot: env.WAIT_FOR_SNAPSHOT,
    trustProxy: env.TRUST_PROXY,
    tlsCert: env.TLS_CERT,
    tlsKey: env.TLS_KEY,
    metricsToken: env.METRICS_TOKEN,
    redisUrl: env.REDIS_URL,
    variantCacheMb: env.VARIANT_CACHE_MB,
    bodyCacheMb: env.BODY_CACHE_MB,
    compressSlots: env.COMPRESS_SLOTS,
    workers: env.WORKERS,
    ...Object.fromEntries(Object.entries(overrides).filter(([, v]) => isSet(v))),
  };
  const parsed = ConfigSchema.safeParse(Object.fromEntries(Object.entries(raw).filter(([, v]) => isSet(v))));
  if (!parsed.success) {
    throw new Error(parsed.error.issues.map((i) => `configuration: ${i.path.join(".")}: ${i.message}`).join("\n"));
  }
  const c = parsed.data;
  const dataDir = resolve(c.dataDir);
  const hostForUrl = c.host.includes(":") ? `[${c.host}]` : c.host;
  const tls =
    c.tlsCert !== undefined && c.tlsKey !== undefined ? { cert: resolve(c.tlsCert), key: resolve(c.tlsKey) } : null;
  return {
    dataDir,
    keysFile: resolve(c.keysFile ?? `${dataDir}/keys.json`),
    port: c.port,
    host: c.host,
    baseUrl: (c.baseUrl ?? `${tls ? "https" : "http"}://${hostForUrl}:${c.port}`).replace(/\/+$/, ""),
    maxAge: c.maxAge,
    logRequests: c.logRequests,
    waitForSnapshot: c.waitForSnapshot,
    trustProxy: c.trustProxy,
    tls,
    metricsToken: c.metricsToken,
    redisUrl: c.redisUrl,
    workers: c.workers,
    variantCacheBytes: c.variantCacheMb * 1024 * 1024,
    bodyCacheBytes: c.bodyCacheMb * 1024 * 1024,
    compressSlots: c.compressSlots,
  };
}

/**
 * A value that is absent, empty or only whitespace is unset: its default applies (and an empty flag leaves the
 * variable in force). Whitespace must not reach the number fields, which would read it as 0 (PORT=" " a random port).
 */
function isSet(v: string | undefined): v is string {
  return v !== undefined && v.trim() !== "";
}
