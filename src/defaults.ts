// The server's default settings, in a module with no imports, so that config.ts (and `npm run keys`) can read
// them without loading the handler and the search engine behind it. Each default is written here once: config.ts's
// schema and the modules that take the setting (the handler, the snapshot's body cache) read it from here.

const MB = 1024 * 1024;

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

/** How often each server hands its usage counts to the database, ms (env USAGE_FLUSH_MS): a figure shows within 15 s. */
export const DEFAULT_USAGE_FLUSH_MS = 5000;
/**
 * Usage rows (one key's minute, about 200 bytes) a server keeps while the database cannot be reached (env
 * USAGE_BUFFER_ROWS): 10,000 busy keys for 20 minutes, in about 40 MB.
 */
export const DEFAULT_USAGE_BUFFER_ROWS = 200_000;
