// Misspellings drawn from the catalog's own vocabulary: one random edit (a letter deleted, inserted, replaced, or
// two neighbours swapped) in one word of a product's name. Used by the benchmark's query mix and hit-rate check,
// and by the tests.
import { createRandom } from "../../src/catalog/sample/random.ts";
import type { SearchDoc } from "../../src/search/types.ts";
import { ONE_TYPO_FROM } from "../../src/search/words.ts";

const LETTERS = "abcdefghijklmnopqrstuvwxyz";

/** One random edit of a word, never the word itself. */
export function misspell(word: string, rnd: () => number): string {
  for (;;) {
    const at = Math.floor(rnd() * word.length);
    const letter = LETTERS[Math.floor(rnd() * LETTERS.length)]!;
    const kind = Math.floor(rnd() * 4);
    const out =
      kind === 0
        ? word.slice(0, at) + word.slice(at + 1)
        : kind === 1
          ? word.slice(0, at) + letter + word.slice(at)
          : kind === 2
            ? word.slice(0, at) + letter + word.slice(at + 1)
            : at + 1 < word.length
              ? word.slice(0, at) + word[at + 1]! + word[at]! + word.slice(at + 2)
              : word;
    if (out !== word) return out;
  }
}

/** A misspelt search for a product: its name with one word of it edited once. */
export interface Misspelling {
  q: string;
  id: number;
  name: string;
}

/**
 * `count` misspellings of names of products from `docs` (seeded): one word of 4 letters or more (a-z only)
 * edited once, leaving it 4 letters or more (so that words.ts forgives it); the rest of the name as it is.
 */
export function misspellings(docs: readonly SearchDoc[], count: number, seed: number): Misspelling[] {
  const rnd = createRandom(seed).next;
  const out: Misspelling[] = [];
  for (let tries = 0; out.length < count && tries < count * 20; tries++) {
    const doc = docs[Math.floor(rnd() * docs.length)]!;
    const words = doc.name.split(" ");
    const editable = words.map((w, i) => [w, i] as const).filter(([w]) => /^[A-Za-z]{4,}$/.test(w));
    if (editable.length === 0) continue;
    const [word, at] = editable[Math.floor(rnd() * editable.length)]!;
    let typo = misspell(word, rnd);
    // A deletion that leaves 3 letters is out of the rule's reach (words.ts forgives words of 4+): edit again.
    while (typo.length < ONE_TYPO_FROM) typo = misspell(word, rnd);
    words[at] = typo;
    out.push({ q: words.join(" "), id: doc.id, name: doc.name });
  }
  return out;
}
