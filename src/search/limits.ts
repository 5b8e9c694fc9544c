// The bounds on one search, in one place: the page a client may ask for (rows, start, filter values), and every loop
// whose length a client chooses, checked after the text is folded (NFKD turns one character into up to 18: `㌖` is
// six letters), so that the worst request is a number. The server checks them (src/serve/admission/search-params.ts)
// and the OpenAPI document states them (src/api/parameters.ts) from here.
import { surfaceWords, fold } from "./tokenize.ts";

/** Results per page when `rows` is absent. */
export const DEFAULT_ROWS = 10;
/** Largest `rows` the API accepts. */
export const MAX_ROWS = 100;
/** Largest `start` accepted: past the end is fine (an empty page), past 32-bit integers is a 400. */
export const MAX_START = 2_147_483_647;
/** Most values one repeated filter may have. */
export const MAX_FILTER_VALUES = 32;

/** Longest `q`, or `brand` value, in UTF-16 code units: both as sent and once folded (case, accents, compatibility forms). */
export const MAX_QUERY_TEXT_LENGTH = 256;
/** Most distinct words a query may have once stop words are dropped. */
export const MAX_QUERY_WORDS = 32;
/** Longest query word (folded) that is matched with typos or as a prefix; longer words match exactly. */
export const MAX_FUZZY_WORD_LENGTH = 24;
/** Most index terms one query word expands to (its exact term included): the cheapest, then the most frequent. */
export const MAX_EXPANSIONS = 32;
/** Most dictionary words a query word's typo variants examine (an edit distance each), whatever they find. */
export const MAX_TYPO_CANDIDATES = 1_000;
/** Most dictionary words a prefix (`prefix=1`) examines, in alphabetical order from the prefix. */
export const MAX_PREFIX_SCAN = 10_000;

/**
 * What is wrong with a query text (`q`, or a `brand` value), or null: empty, too long as sent or once folded, or
 * (`q` only) more than {@link MAX_QUERY_WORDS} distinct words. The text is trimmed by the caller.
 */
export function queryTextProblem(text: string, countWords: boolean): string | null {
  if (text === "") return "must not be empty";
  const tooLong = `must be at most ${MAX_QUERY_TEXT_LENGTH} characters, as sent and once case, accents and compatibility forms are folded`;
  if (text.length > MAX_QUERY_TEXT_LENGTH) return tooLong;
  if (fold(text).length > MAX_QUERY_TEXT_LENGTH) return tooLong;
  if (countWords && new Set(surfaceWords(text, true).map((w) => w.term)).size > MAX_QUERY_WORDS) {
    return `must have at most ${MAX_QUERY_WORDS} distinct words (stop words such as "the" do not count)`;
  }
  return null;
}
