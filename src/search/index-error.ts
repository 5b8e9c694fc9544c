// The one error loading a search index can raise: wrong file, wrong version, or damaged bytes.

/** The index file cannot be used; `message` says why, in words an operator can act on. */
export class SearchIndexError extends Error {
  override name = "SearchIndexError";
}
