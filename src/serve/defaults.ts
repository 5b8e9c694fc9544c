// The serve side's default settings, in a module with no imports, so that config.ts (and `npm run keys`) can read
// them without loading the handler and the search engine behind it.

/** Freshness of a response that does not change sooner, in seconds (product data may be this stale). */
export const DEFAULT_MAX_AGE = 300;
