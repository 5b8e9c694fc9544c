// Every command's default settings, in a module with no imports, so that the configuration (and `npm run keys`) can
// read them without loading the handler and the search engine behind it. Each default is written here once, named
// for what it sets or limits: the schemas (server.ts, portal.ts) and the modules that take the setting read it here.

const MB = 1024 * 1024;

/** The port the API listens on (env PORT). */
export const DEFAULT_PORT = 8080;
/** The address the API and the portal listen on (env HOST; the portal's PORTAL_HOST): this machine only. */
export const DEFAULT_HOST = "127.0.0.1";
/** Where snapshots are published, relative to the working directory (env DATA_DIR). */
export const DEFAULT_DATA_DIR = "data";

/** Requests a second a key may make, and its burst on top, unless its record sets its own. */
export const DEFAULT_KEY_RATE_LIMIT = { rate: 50, burst: 200 } as const;
/** Failed authentications per client address: ten at once, then one a second. */
export const DEFAULT_AUTH_FAILURE_LIMIT = { rate: 1, burst: 10 } as const;

/** The port the developer portal listens on (env PORTAL_PORT). */
export const DEFAULT_PORTAL_PORT = 8081;
/** The sender of the portal's mails (env MAIL_FROM). */
export const DEFAULT_MAIL_FROM = "Developer portal <portal@localhost>";
/** Live keys a partner's account may have (env PORTAL_KEY_LIMIT). */
export const DEFAULT_KEYS_PER_ACCOUNT = 10;

/** Freshness of a response that does not change sooner, in seconds (product data may be this stale). */
export const DEFAULT_MAX_AGE = 300;

/** Memory for cached affid/JSONP variants, the templates of lists included, in MB (env VARIANT_CACHE_MB). */
export const DEFAULT_VARIANT_CACHE_MB = 32;
/** DEFAULT_VARIANT_CACHE_MB in bytes. */
export const DEFAULT_VARIANT_CACHE_BYTES = DEFAULT_VARIANT_CACHE_MB * MB;

/** Memory for bodies read from the packs, in MB (env BODY_CACHE_MB): every body of 100,000 products (430 MB) fits. */
export const DEFAULT_BODY_CACHE_MB = 1024;
/** DEFAULT_BODY_CACHE_MB in bytes. */
export const DEFAULT_BODY_CACHE_BYTES = DEFAULT_BODY_CACHE_MB * MB;

/** Bodies brotli-compressed in the background at once (env COMPRESS_SLOTS); what finds no free slot is not queued. */
export const DEFAULT_COMPRESS_SLOTS = 2;

/**
 * How long a front (deploy/nginx, deploy/varnish) may keep GET /edge/key's answer about a key, in seconds (env
 * EDGE_KEY_TTL): a revoked key is refused at the front within this plus the 2 s a reload takes.
 */
export const DEFAULT_EDGE_KEY_TTL = 2;
/**
 * How long a front of EDGE_FRONTS may hold a check while it is in step with the server's pushes, in seconds (env
 * EDGE_KEY_HOLD): a change of a key reaches it by a push (src/edge/), within 2 s, not by the check's expiry.
 */
export const DEFAULT_EDGE_KEY_HOLD = 3600;

/** How often each server hands its usage counts to the database, ms (env USAGE_FLUSH_MS): a figure shows within 15 s. */
export const DEFAULT_USAGE_FLUSH_MS = 5000;
/**
 * Usage rows (one key's minute, about 200 bytes) a server keeps while the database cannot be reached (env
 * USAGE_BUFFER_ROWS): 10,000 busy keys for 20 minutes, in about 40 MB.
 */
export const DEFAULT_USAGE_BUFFER_ROWS = 200_000;
