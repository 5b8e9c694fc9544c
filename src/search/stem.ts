// The Porter2 ("Snowball English") stemmer, for lower-case ASCII words: dresses -> dress, running -> run.
// Follows https://snowballstem.org/algorithms/english/stemmer.html (the original 2002 definition).

const EXCEPTIONS: ReadonlyMap<string, string> = new Map([
  ["skis", "ski"],
  ["skies", "sky"],
  ["dying", "die"],
  ["lying", "lie"],
  ["tying", "tie"],
  ["idly", "idl"],
  ["gently", "gentl"],
  ["ugly", "ugli"],
  ["early", "earli"],
  ["only", "onli"],
  ["singly", "singl"],
  ["sky", "sky"],
  ["news", "news"],
  ["howe", "howe"],
  ["atlas", "atlas"],
  ["cosmos", "cosmos"],
  ["bias", "bias"],
  ["andes", "andes"],
]);
const AFTER_1A_INVARIANT = new Set([
  "inning",
  "outing",
  "canning",
  "herring",
  "earring",
  "proceed",
  "exceed",
  "succeed",
]);
const DOUBLES = new Set(["bb", "dd", "ff", "gg", "mm", "nn", "pp", "rr", "tt"]);
const LI_ENDING = new Set(["c", "d", "e", "g", "h", "k", "m", "n", "r", "t"]);

/** Suffix tables, longest first within each step so that the first hit is the longest suffix. */
const STEP2: readonly (readonly [string, string])[] = [
  ["ization", "ize"],
  ["ational", "ate"],
  ["fulness", "ful"],
  ["ousness", "ous"],
  ["iveness", "ive"],
  ["tional", "tion"],
  ["biliti", "ble"],
  ["lessli", "less"],
  ["entli", "ent"],
  ["ation", "ate"],
  ["alism", "al"],
  ["aliti", "al"],
  ["ousli", "ous"],
  ["iviti", "ive"],
  ["fulli", "ful"],
  ["enci", "ence"],
  ["anci", "ance"],
  ["abli", "able"],
  ["izer", "ize"],
  ["ator", "ate"],
  ["alli", "al"],
  ["bli", "ble"],
  ["ogi", "og"],
  ["li", ""],
];
const STEP3: readonly (readonly [string, string])[] = [
  ["ational", "ate"],
  ["tional", "tion"],
  ["alize", "al"],
  ["icate", "ic"],
  ["iciti", "ic"],
  ["ative", ""],
  ["ical", "ic"],
  ["ness", ""],
  ["ful", ""],
];
const STEP4 = [
  "ement",
  "ance",
  "ence",
  "able",
  "ible",
  "ment",
  "ant",
  "ent",
  "ism",
  "ate",
  "iti",
  "ous",
  "ive",
  "ize",
  "ion",
  "al",
  "er",
  "ic",
];

const isVowel = (c: string | undefined): boolean =>
  c === "a" || c === "e" || c === "i" || c === "o" || c === "u" || c === "y";

/** Start of the region after the first non-vowel that follows a vowel, searching from `from`. */
function regionAfter(w: string, from: number): number {
  for (let i = from + 1; i < w.length; i++) {
    if (!isVowel(w[i]) && isVowel(w[i - 1])) return i + 1;
  }
  return w.length;
}

/** Does a short syllable end at index `end` (inclusive)? */
function shortSyllableAt(w: string, end: number): boolean {
  if (end === 1) return isVowel(w[0]) && !isVowel(w[1]);
  if (end < 2) return false;
  const c = w[end];
  return !isVowel(w[end - 2]) && isVowel(w[end - 1]) && !isVowel(c) && c !== "w" && c !== "x" && c !== "Y";
}

const isShortWord = (w: string, r1: number): boolean => r1 >= w.length && shortSyllableAt(w, w.length - 1);

function hasVowel(w: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (isVowel(w[i])) return true;
  return false;
}

/** Stems one lower-case ASCII word (letters a-z only). Other input comes back unchanged. */
export function stem(word: string): string {
  if (word.length <= 2) return word;
  const exception = EXCEPTIONS.get(word);
  if (exception !== undefined) return exception;

  // Mark consonant y: at the start, or after a vowel.
  let w = word;
  if (w.includes("y")) {
    let marked = "";
    for (let i = 0; i < w.length; i++) {
      const c = w[i]!;
      marked += c === "y" && (i === 0 || isVowel(marked[i - 1])) ? "Y" : c;
    }
    w = marked;
  }

  let r1: number;
  if (w.startsWith("gener") || w.startsWith("arsen")) r1 = 5;
  else if (w.startsWith("commun")) r1 = 6;
  else r1 = regionAfter(w, 0);
  const r2 = regionAfter(w, r1);

  // Step 1a
  if (w.endsWith("sses")) w = w.slice(0, -2);
  else if (w.endsWith("ied") || w.endsWith("ies")) w = w.length > 4 ? w.slice(0, -2) : w.slice(0, -1);
  else if (w.endsWith("us") || w.endsWith("ss")) {
    // unchanged
  } else if (w.endsWith("s") && hasVowel(w, 0, w.length - 2)) w = w.slice(0, -1);

  if (AFTER_1A_INVARIANT.has(w)) return w;

  // Step 1b
  const eed = w.endsWith("eedly") ? 5 : w.endsWith("eed") ? 3 : 0;
  if (eed > 0) {
    if (w.length - eed >= r1) w = w.slice(0, -eed) + "ee";
  } else {
    const suffix = ["ingly", "edly", "ing", "ed"].find((s) => w.endsWith(s));
    if (suffix !== undefined && hasVowel(w, 0, w.length - suffix.length)) {
      w = w.slice(0, -suffix.length);
      if (w.endsWith("at") || w.endsWith("bl") || w.endsWith("iz")) w += "e";
      else if (DOUBLES.has(w.slice(-2))) w = w.slice(0, -1);
      else if (isShortWord(w, r1)) w += "e";
    }
  }

  // Step 1c
  const last = w[w.length - 1];
  if ((last === "y" || last === "Y") && w.length > 2 && !isVowel(w[w.length - 2])) w = w.slice(0, -1) + "i";

  // Step 2
  for (const [suffix, replacement] of STEP2) {
    if (!w.endsWith(suffix)) continue;
    const at = w.length - suffix.length;
    if (at >= r1) {
      if (suffix === "ogi") {
        if (w[at - 1] === "l") w = w.slice(0, at) + replacement;
      } else if (suffix === "li") {
        if (LI_ENDING.has(w[at - 1] ?? "")) w = w.slice(0, at);
      } else w = w.slice(0, at) + replacement;
    }
    break;
  }

  // Step 3
  for (const [suffix, replacement] of STEP3) {
    if (!w.endsWith(suffix)) continue;
    const at = w.length - suffix.length;
    if (at >= r1 && (suffix !== "ative" || at >= r2)) w = w.slice(0, at) + replacement;
    break;
  }

  // Step 4
  for (const suffix of STEP4) {
    if (!w.endsWith(suffix)) continue;
    const at = w.length - suffix.length;
    if (at >= r2 && (suffix !== "ion" || w[at - 1] === "s" || w[at - 1] === "t")) w = w.slice(0, at);
    break;
  }

  // Step 5
  const end = w.length - 1;
  if (w[end] === "e") {
    if (end >= r2 || (end >= r1 && !shortSyllableAt(w, end - 1))) w = w.slice(0, end);
  } else if (w[end] === "l" && end >= r2 && w[end - 1] === "l") w = w.slice(0, end);

  return w.includes("Y") ? w.replaceAll("Y", "y") : w;
}
