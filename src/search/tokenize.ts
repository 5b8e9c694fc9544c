// The one tokenizer, shared by the index build and the query side: folding, splitting, stop words, stemming.
import { stem } from "./stem.ts";

/** Lucene's English stop set: words too common to help, dropped from documents and queries alike. */
export const STOP_WORDS: ReadonlySet<string> = new Set([
  "a",
  "an",
  "and",
  "are",
  "as",
  "at",
  "be",
  "but",
  "by",
  "for",
  "if",
  "in",
  "into",
  "is",
  "it",
  "no",
  "not",
  "of",
  "on",
  "or",
  "such",
  "that",
  "the",
  "their",
  "then",
  "there",
  "these",
  "they",
  "this",
  "to",
  "was",
  "will",
  "with",
]);

/** Longest term kept, in UTF-16 code units; longer words are cut (the same way on both sides). */
const MAX_TERM_LENGTH = 64;

/** Letters that case folding and NFKD leave alone but a shopper types in their plain form. */
const EXTRA_FOLDS: Readonly<Record<string, string>> = {
  ß: "ss",
  ẞ: "ss",
  æ: "ae",
  œ: "oe",
  ø: "o",
  đ: "d",
  ð: "d",
  ł: "l",
  ı: "i",
  þ: "th",
  ħ: "h",
  ŧ: "t",
  ŀ: "l",
};
const EXTRA_FOLD_RE = new RegExp(`[${Object.keys(EXTRA_FOLDS).join("")}]`, "g");

/**
 * A word: runs of letters and digits joined by apostrophes or hyphens (`levi's`, `t-shirt`, `501`).
 * Apostrophes are dropped (`levi's` -> `levis`); a hyphenated word is a compound (see {@link tokenize}).
 */
const WORD_RE = /[\p{L}\p{N}]+(?:['’‘ʼ\-‐‑][\p{L}\p{N}]+)*/gu;
const HYPHEN_RE = /[-‐‑]/;
const APOSTROPHE_RE = /['’‘ʼ]/g;
const ASCII_WORD_RE = /^[a-z]+$/;

/** Case and accent folding: `Café` -> `cafe`, `Straße` -> `strasse`, full-width `５０１` -> `501`. */
export function fold(text: string): string {
  return text
    .normalize("NFKD")
    .replace(/\p{M}+/gu, "")
    .toLowerCase()
    .replace(EXTRA_FOLD_RE, (c) => EXTRA_FOLDS[c] ?? c);
}

const stemCache = new Map<string, string>();
const STEM_CACHE_LIMIT = 200_000;

/** The term a folded word becomes: stemmed when it is plain a-z, cut to {@link MAX_TERM_LENGTH}. */
function toTerm(word: string): string {
  let term = stemCache.get(word);
  if (term === undefined) {
    term = ASCII_WORD_RE.test(word) ? stem(word) : word;
    if (term.length > MAX_TERM_LENGTH) {
      const cut = /[\uD800-\uDBFF]/.test(term[MAX_TERM_LENGTH - 1] ?? "") ? MAX_TERM_LENGTH - 1 : MAX_TERM_LENGTH;
      term = term.slice(0, cut);
    }
    if (stemCache.size >= STEM_CACHE_LIMIT) stemCache.clear();
    stemCache.set(word, term);
  }
  return term;
}

/** Calls `emit` with every word of a text that is not a stop word (folded, apostrophes dropped), in order. */
function eachWord(text: string, forQuery: boolean, emit: (word: string) => void): void {
  const push = (word: string) => {
    if (!STOP_WORDS.has(word)) emit(word);
  };
  for (const match of fold(text).matchAll(WORD_RE)) {
    const word = match[0].replace(APOSTROPHE_RE, "");
    if (!HYPHEN_RE.test(word)) {
      push(word);
      continue;
    }
    const parts = word.split(HYPHEN_RE);
    if (!forQuery) for (const part of parts) push(part);
    push(parts.join(""));
  }
}

function terms(text: string, forQuery: boolean): string[] {
  const out: string[] = [];
  eachWord(text, forQuery, (word) => out.push(toTerm(word)));
  return out;
}

/** A word as typed (folded) and the term it becomes. */
export interface SurfaceWord {
  surface: string;
  term: string;
}

/**
 * The words of a text with their terms, in order, as {@link tokenize} (documents) or {@link tokenizeQuery}
 * (`forQuery`) makes them: typo and prefix matching compare what was typed with the words of the documents.
 */
export function surfaceWords(text: string, forQuery: boolean): SurfaceWord[] {
  const out: SurfaceWord[] = [];
  eachWord(text, forQuery, (word) => out.push({ surface: word, term: toTerm(word) }));
  return out;
}

/**
 * Document side: the terms of a text, in order, repeats kept (they are term frequencies).
 * Case and accents are folded, stop words dropped, plain a-z words stemmed (Porter2), digits kept as they
 * are (`501`). A hyphenated compound yields its parts and the joined word: `t-shirts` -> `t`, `shirt`,
 * `tshirt`; so the queries `t-shirt`, `tshirt` and `t shirt` all find it.
 */
export function tokenize(text: string): string[] {
  return terms(text, false);
}

/**
 * Query side: like {@link tokenize}, except that a hyphenated compound is only its joined word
 * (`t-shirt` -> `tshirt`), so it finds both `t-shirt` and `tshirt` in documents without demanding that
 * the lone part `t` appear somewhere. Repeated terms are kept; the engine de-duplicates.
 */
export function tokenizeQuery(text: string): string[] {
  return terms(text, true);
}
