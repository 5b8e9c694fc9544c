// The API's settings (npm run serve, npm start, and the build, keys, usage and ship commands, which read the same
// variables): one zod schema over environment and flags -> typed Config, parsed once by the CLI (rules.ts's rules).
import { availableParallelism } from "node:os";
import { join, resolve } from "node:path";
import { z } from "zod";
import { EdgeFrontsSchema } from "./edge-fronts.ts";
import { TrustProxySchema } from "./proxies.ts";
import { decimal, onOff, parseWith, Port } from "./rules.ts";
import {
  DEFAULT_BODY_CACHE_MB,
  DEFAULT_COMPRESS_SLOTS,
  DEFAULT_DATA_DIR,
  DEFAULT_HOST,
  DEFAULT_PORT,
  DEFAULT_EDGE_KEY_HOLD,
  DEFAULT_EDGE_KEY_TTL,
  DEFAULT_MAX_AGE,
  DEFAULT_USAGE_BUFFER_ROWS,
  DEFAULT_USAGE_FLUSH_MS,
  DEFAULT_VARIANT_CACHE_MB,
} from "./defaults.ts";

const MB = 1024 * 1024;

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
    /**
     * The developer portal's public URL (PORTAL_URL, as the portal reads it): the reference page (/docs) sends partners
     * there for a key. Default none: the page says that the API's operator issues keys (`npm run keys`).
     */
    portalUrl: z
      .url({ protocol: /^https?$/ })
      .refine((u) => !/[?#@]/.test(u), "must have no query (?), fragment (#) or credentials (@)")
      .transform((u) => u.replace(/\/+$/, ""))
      .optional(),
    /** Freshness in seconds for responses that do not change sooner. Env MAX_AGE. Default 300. */
    maxAge: decimal(z.number().int().min(0).max(86_400)).default(DEFAULT_MAX_AGE),
    /** One JSON log line per request on stdout. Env LOG_REQUESTS ("0" turns it off). Default on. */
    logRequests: onOff("1"),
    /** Start without a snapshot and answer 503 until one is published. Env WAIT_FOR_SNAPSHOT ("1"). Default off: fail at start-up. */
    waitForSnapshot: onOff("0"),
    /**
     * Proxies whose X-Forwarded-For names the client, for the failed-authentication limit: comma-separated addresses
     * and CIDR networks, or `loopback` (a proxy on this machine); from any other peer the header is ignored. Env
     * TRUST_PROXY. Default `0`: none. `1` (which trusted the header from any peer) is refused with a message.
     */
    trustProxy: TrustProxySchema,
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
    /**
     * Seconds a front may keep GET /edge/key's answer (allowed or refused) about a key: the front's key check, which
     * the server answers to the proxies of TRUST_PROXY only. Env EDGE_KEY_TTL (0-60). Default 2.
     */
    edgeKeyTtl: decimal(z.number().int().min(0).max(60)).default(DEFAULT_EDGE_KEY_TTL),
    /**
     * The fronts the server pushes every change of a key to (src/edge/), so that they may hold a check for
     * EDGE_KEY_HOLD: comma-separated `name=url` (the kind is the name: nginx, varnish) or `name=kind:url`,
     * e.g. `varnish=http://127.0.0.1:6081,edge2=nginx:http://10.0.0.2:80`. A front names itself in the check's
     * `X-Edge-Front` header. Env EDGE_FRONTS. Default none: every check is held EDGE_KEY_TTL.
     */
    edgeFronts: EdgeFrontsSchema,
    /**
     * Seconds a front of EDGE_FRONTS may hold a check about a valid, revoked or suspended key while it is in step
     * (every push since its last resync reached it); otherwise EDGE_KEY_TTL. Env EDGE_KEY_HOLD (0-86400). Default 3600.
     */
    edgeKeyHold: decimal(z.number().int().min(0).max(86_400)).default(DEFAULT_EDGE_KEY_HOLD),
    /** Usage per key counted and handed to the portal's database (src/usage/). Env USAGE ("0" turns it off). Default on. */
    countUsage: onOff("1"),
    /** The portal's database, where usage goes: postgres://... or a SQLite file. Env DATABASE_URL. Default <dataDir>/portal.db. */
    databaseUrl: z.string().min(1).optional(),
    /** How often usage is handed to the database, ms (at most 10 s). Env USAGE_FLUSH_MS. Default 5000. */
    usageFlushMs: decimal(z.number().int().min(100).max(10_000)).default(DEFAULT_USAGE_FLUSH_MS),
    /** Usage rows (a key's minute) kept while the database cannot be reached. Env USAGE_BUFFER_ROWS. Default 200,000. */
    usageBufferRows: decimal(z.number().int().min(1000).max(10_000_000)).default(DEFAULT_USAGE_BUFFER_ROWS),
    /**
     * The keys through Redis (src/keys/): `publish` this machine's keys file, `follow` the keys Redis holds, or
     * `shared` (every machine changes them in Redis). Env KEYS_SYNC; needs REDIS_URL. Default none: the file alone.
     */
    keysSync: z.enum(["publish", "follow", "shared"], "must be publish, follow or shared").optional(),
    /** The varnishncsa program `npm run usage -- varnish` reads Varnish's log with. Env VARNISHNCSA. Default from PATH. */
    varnishncsa: z.string().min(1).default("varnishncsa"),
  })
  .superRefine((c, ctx) => {
    if ((c.tlsCert === undefined) !== (c.tlsKey === undefined)) {
      ctx.addIssue({
        code: "custom",
        path: [c.tlsCert === undefined ? "tlsCert" : "tlsKey"],
        message: "TLS_CERT and TLS_KEY must both be set, or neither",
      });
    }
    if (c.keysSync && !c.redisUrl) {
      ctx.addIssue({
        code: "custom",
        path: ["keysSync"],
        message: `KEYS_SYNC=${c.keysSync} needs REDIS_URL: the keys go through Redis`,
      });
    }
  })
  .transform(({ tlsCert, tlsKey, variantCacheMb, bodyCacheMb, ...c }) => {
    const dataDir = resolve(c.dataDir);
    const hostForUrl = c.host.includes(":") ? `[${c.host}]` : c.host;
    /** Certificate and key files (absolute), or null for plain HTTP. */
    const tls = tlsCert !== undefined && tlsKey !== undefined ? { cert: resolve(tlsCert), key: resolve(tlsKey) } : null;
    return {
      ...c,
      dataDir,
      keysFile: resolve(c.keysFile ?? `${dataDir}/keys.json`),
      databaseUrl: c.databaseUrl ?? join(dataDir, "portal.db"),
      baseUrl: (c.baseUrl ?? `${tls ? "https" : "http"}://${hostForUrl}:${c.port}`).replace(/\/+$/, ""),
      tls,
      /** Memory for cached affid/JSONP variants, bytes (VARIANT_CACHE_MB). */
      variantCacheBytes: variantCacheMb * MB,
      /** Memory for resource bodies read from the packs, bytes (BODY_CACHE_MB). */
      bodyCacheBytes: bodyCacheMb * MB,
    };
  });

/** The settings, as the CLI passes them on (the handler takes the serving ones as they are). */
export type Config = z.output<typeof ConfigSchema>;

/** Each setting's environment variable: the one place the names are written. */
export const ENV_NAMES = {
  dataDir: "DATA_DIR",
  keysFile: "KEYS_FILE",
  port: "PORT",
  host: "HOST",
  baseUrl: "BASE_URL",
  portalUrl: "PORTAL_URL",
  maxAge: "MAX_AGE",
  logRequests: "LOG_REQUESTS",
  waitForSnapshot: "WAIT_FOR_SNAPSHOT",
  trustProxy: "TRUST_PROXY",
  tlsCert: "TLS_CERT",
  tlsKey: "TLS_KEY",
  variantCacheMb: "VARIANT_CACHE_MB",
  bodyCacheMb: "BODY_CACHE_MB",
  compressSlots: "COMPRESS_SLOTS",
  workers: "WORKERS",
  redisUrl: "REDIS_URL",
  metricsToken: "METRICS_TOKEN",
  edgeKeyTtl: "EDGE_KEY_TTL",
  edgeFronts: "EDGE_FRONTS",
  edgeKeyHold: "EDGE_KEY_HOLD",
  countUsage: "USAGE",
  databaseUrl: "DATABASE_URL",
  usageFlushMs: "USAGE_FLUSH_MS",
  usageBufferRows: "USAGE_BUFFER_ROWS",
  keysSync: "KEYS_SYNC",
  varnishncsa: "VARNISHNCSA",
} as const satisfies Record<keyof z.input<typeof ConfigSchema>, string>;

/** Parses the environment (and overrides from flags) into a Config; throws with every problem listed. */
export function parseConfig(
  env: Record<string, string | undefined>,
  overrides: Partial<Record<keyof typeof ENV_NAMES, string>> = {},
): Config {
  return parseWith(ConfigSchema, ENV_NAMES, env, overrides);
}
