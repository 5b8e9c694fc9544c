// Requests made to cost the server as much as its parsers allow: search texts at and past every bound (after folding),
// Unicode normalisation traps, typo-heavy and prefix-heavy words, every filter repeated and every facet at once; and
// for the other endpoints the longest callback, affid, path and headers that are accepted. Deterministic from a seed.
import { createRandom } from "../../src/catalog/sample/random.ts";
import { COLOR_GROUPS, GENDERS, STORES } from "../../src/catalog/schema.ts";
import { MAX_FUZZY_WORD_LENGTH, MAX_QUERY_TEXT_LENGTH, MAX_QUERY_WORDS } from "../../src/search/limits.ts";
import { fold } from "../../src/search/tokenize.ts";
import { FACET_NAMES, SORT_ORDERS } from "../../src/search/types.ts";

/** One request: what it is, its target and headers, and the statuses that are right for it. */
export interface WorstCase {
  name: string;
  target: string;
  headers?: ReadonlyArray<readonly [string, string]>;
  /** Statuses that are a right answer (the run fails on any other). */
  expect: readonly number[];
}

/** What the cases are made from: the key, words of the catalog, brands, size keys and resource paths. */
export interface WorstMaterial {
  key: string;
  words: readonly string[];
  brands: readonly string[];
  sizeKeys: readonly string[];
  paths: readonly string[];
}

/** Characters whose folded form (NFKD, marks dropped, lower case) is longest, and other traps, by name. */
export const TRAPS: Readonly<Record<string, string>> = {
  /** ㌖: a compatibility square that folds to six letters (the request). */
  square: "\u3316",
  /** ﷺ: an Arabic ligature that folds to 18 characters, the longest NFKD expansion. */
  arabicLigature: "\ufdfa",
  /** ﬃ: a Latin ligature, three letters. */
  latinLigature: "\ufb03",
  /** ｌｅａｔｈｅｒ: full-width forms. */
  fullWidth: "\uff4c\uff45\uff41\uff54\uff48\uff45\uff52",
  /** A letter under 20 combining marks: one letter once folded. */
  combining: "e" + "\u0301\u0308\u0323\u0330".repeat(5),
  /** 한: a Hangul syllable, three letters (jamo) once decomposed. */
  hangul: "\ud55c",
  /** A family emoji (ZWJ sequence) and a flag: no letters at all. */
  emoji: "\u{1f469}\u200d\u{1f469}\u200d\u{1f467}\u200d\u{1f466}\u{1f1eb}\u{1f1f7}",
  /** Latin with a Cyrillic е and a Greek ο: mixed scripts in one word. */
  mixedScripts: "l\u0435ather b\u03bfots",
  /** ß and ẞ: fold to "ss" after NFKD. */
  sharpS: "stra\u00dfe\u1e9e",
  /** Mathematical bold letters (outside the BMP): NFKD makes them plain. */
  mathBold: "\u{1d41b}\u{1d428}\u{1d428}\u{1d42d}\u{1d42c}",
};

/** `text` repeated until its folded form has `folded` code units at the most (and as many as fit). */
function fill(text: string, folded: number): string {
  let out = "";
  while (fold(out + text).length <= folded && out.length + text.length <= MAX_QUERY_TEXT_LENGTH) out += text;
  return out;
}

/** `word` with `edits` random edits (replace, delete, insert, swap neighbours), each inside the word. */
function misspell(word: string, edits: number, rnd: () => number): string {
  let w = word;
  for (let e = 0; e < edits; e++) {
    const i = 1 + Math.floor(rnd() * (w.length - 2));
    const letter = String.fromCharCode(97 + Math.floor(rnd() * 26));
    const kind = Math.floor(rnd() * 4);
    if (kind === 0) w = w.slice(0, i) + letter + w.slice(i + 1);
    else if (kind === 1) w = w.slice(0, i) + w.slice(i + 1);
    else if (kind === 2) w = w.slice(0, i) + letter + w.slice(i);
    else w = w.slice(0, i - 1) + w[i] + w[i - 1] + w.slice(i + 1);
  }
  return w;
}

/** Words of `length` letters from the catalog's words (cut or repeated to fit), all distinct. */
function wordsOf(material: WorstMaterial, length: number, count: number, rnd: () => number): string[] {
  const out = new Set<string>();
  const pool = material.words.filter((w) => w.length >= 4);
  for (let tries = 0; out.size < count && tries < count * 20; tries++) {
    const w = pool[Math.floor(rnd() * pool.length)]!;
    out.add((w + w + w + w).slice(0, length));
  }
  return [...out];
}

/** The three letters that begin the most catalog words: the prefix that expands the most. */
function busiestPrefix(words: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const w of words) if (w.length >= 3) counts.set(w.slice(0, 3), (counts.get(w.slice(0, 3)) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]?.[0] ?? "sta";
}

/**
 * The requests that bring a server to its steady state before the worst cases are measured: code compiled, and what
 * it makes once per snapshot state (a calendar feed's rendering, at 100,000 products 80-100 ms, once per pair of list
 * bodies) made; a client cannot make the server do that again at will.
 */
export function warmUpCases(cases: readonly WorstCase[]): WorstCase[] {
  return [...cases.slice(0, 40), ...cases.filter((c) => c.name.startsWith("calendar")).slice(0, 2)];
}

/** Every worst case for `material`: fixed ones, then `random` mixtures of traps and typos from `seed`. */
export function worstCases(material: WorstMaterial, seed: number, random: number): WorstCase[] {
  const rnd = createRandom(seed).next;
  const key = `apikey=${material.key}`;
  const search = (q: string, extra = "") => `/v1/products?${key}&q=${encodeURIComponent(q)}${extra}`;
  const every = (name: string, values: readonly string[]) =>
    values.map((v) => `&${name}=${encodeURIComponent(v)}`).join("");
  const allFacets = `&facets=${FACET_NAMES.join(",")}`;
  const cases: WorstCase[] = [];
  const add = (name: string, target: string, expect: readonly number[] = [200]) => cases.push({ name, target, expect });

  // Past the bounds: refused, cheaply.
  add("issue 27: U+3316 x 256 (folds to 1,536 letters)", search(TRAPS.square!.repeat(256)), [400]);
  add("U+FDFA x 256 (folds to 4,608 characters)", search(TRAPS.arabicLigature!.repeat(256)), [400]);
  add("257 letters", search("a".repeat(257)), [400]);
  add("33 distinct words", search(Array.from({ length: 33 }, (_, i) => `w${i}`).join(" ")), [400]);
  add("33 brands", search("dress", every("brand", Array(33).fill("x"))), [400]);
  add("brand folding past 256", search("dress", every("brand", [TRAPS.square!.repeat(50)])), [400]);

  // At the bounds: one long word of each trap, folded to just under the limit.
  for (const [name, trap] of Object.entries(TRAPS)) {
    add(`${name}, filled to ${MAX_QUERY_TEXT_LENGTH} once folded`, search(fill(trap, MAX_QUERY_TEXT_LENGTH)));
    add(`${name}, filled, prefix, every facet`, search(fill(trap, MAX_QUERY_TEXT_LENGTH), `&prefix=1${allFacets}`));
  }
  add("combining marks only (256 as sent, 1 once folded)", search("e" + "\u0301".repeat(255)));
  // Typo-heavy: as many fuzzy words as fit, each misspelt by as many edits as it is allowed.
  for (const length of [4, 5, 7, 8, 12, MAX_FUZZY_WORD_LENGTH, MAX_FUZZY_WORD_LENGTH + 1]) {
    const count = Math.min(MAX_QUERY_WORDS, Math.floor((MAX_QUERY_TEXT_LENGTH + 1) / (length + 1)));
    const words = wordsOf(material, length, count, rnd).map((w) => misspell(w, length >= 8 ? 2 : 1, rnd));
    while (words.join(" ").length > MAX_QUERY_TEXT_LENGTH) words.pop(); // an edit may have added a letter
    add(`${count} words of ${length} letters, misspelt`, search(words.join(" ")));
    add(
      `${count} words of ${length} letters, misspelt, prefix, every facet`,
      search(words.join(" "), `&prefix=1${allFacets}`),
    );
  }
  const prefix = busiestPrefix(material.words);
  add(`busiest prefix "${prefix}", every facet, every filter repeated`, search(prefix, `&prefix=1${allFacets}`));
  // 16 + 16 + 13 + 3 + 5 values, and the key, q, sort and facets: 57 of the 64 parameters a request may have.
  const filters =
    every("brand", material.brands.slice(0, 16)) +
    every("size", material.sizeKeys.slice(0, 16)) +
    every("color", COLOR_GROUPS) +
    every("gender", GENDERS) +
    every("store", [...STORES, "children"]);
  for (const sort of SORT_ORDERS) {
    add(
      `common word, sort ${sort}, every filter and facet`,
      search(material.words[0] ?? "dress", `&sort=${sort}${allFacets}${filters}`),
    );
    add(
      `busiest prefix, sort ${sort}, deepest page`,
      search(prefix, `&prefix=1&sort=${sort}&rows=100&start=2147483547`),
    );
  }
  add(
    "every brand a long text",
    search(
      "dress",
      every(
        "brand",
        Array.from({ length: 4 }, () => fill(TRAPS.latinLigature!, 250)),
      ),
    ),
  );
  add(
    "32 words of one letter",
    search(Array.from({ length: 32 }, (_, i) => String.fromCharCode(98 + (i % 25)) + (i >= 25 ? "z" : "")).join(" ")),
  );
  add(
    "price range over everything",
    search(prefix, "&prefix=1&min_price=0&max_price=999999999.99&rows=100&sort=price_desc"),
  );

  // Random mixtures: traps, misspelt catalog words and plain letters, up to the folded limit, with random options.
  const trapList = Object.values(TRAPS);
  for (let i = 0; i < random; i++) {
    let q = "";
    for (let parts = 0; parts < 40; parts++) {
      const pick = rnd();
      const piece =
        pick < 0.4
          ? trapList[Math.floor(rnd() * trapList.length)]!
          : pick < 0.8
            ? misspell(material.words[Math.floor(rnd() * material.words.length)] ?? "dress", Math.floor(rnd() * 3), rnd)
            : "x".repeat(1 + Math.floor(rnd() * 30));
      const next = q === "" ? piece : `${q}${rnd() < 0.7 ? " " : ""}${piece}`;
      if (next.length > MAX_QUERY_TEXT_LENGTH || fold(next).length > MAX_QUERY_TEXT_LENGTH) break;
      q = next;
    }
    const opts =
      (rnd() < 0.5 ? "&prefix=1" : "") +
      (rnd() < 0.5 ? allFacets : "") +
      (rnd() < 0.3 ? `&sort=${SORT_ORDERS[Math.floor(rnd() * SORT_ORDERS.length)]}` : "") +
      (rnd() < 0.3 ? "&rows=100" : "");
    // A mixture may hold more than the allowed distinct words: a 400 is then right.
    add(`random mixture ${i + 1}`, search(q.trim() || "x", opts), [200, 400]);
  }

  // The other endpoints: the longest accepted callback, affid, path and headers, on the largest sale list.
  const list = "/v1/sales/active.json";
  const callback = "$" + "a.".repeat(31) + "b";
  const affid = (i: number) => `${i}`.padEnd(64, "x.-_");
  // The largest list as it is (no variant): the cost of its size alone, to read the variants' costs against.
  add("sale list, as it is (identity)", `${list}?${key}`);
  add("sale list, longest callback", `${list}?${key}&callback=${callback}`);
  add("sale list, longest callback, suppressed 404", `/v1/nope?${key}&callback=${callback}&suppress_response_codes=1`);
  for (let i = 0; i < 5; i++) add(`sale list, new longest affid ${i + 1}`, `${list}?${key}&affid=${affid(i)}`);
  add("sale list, affid and callback", `${list}?${key}&affid=${affid(9)}&callback=${callback}`);
  // The calendar feeds, made per request from the lists in force: each new affid is a new feed.
  for (let i = 0; i < 3; i++)
    add(`calendar, new longest affid ${i + 1}`, `/v1/sales/upcoming.ics?${key}&affid=${affid(20 + i)}`);
  add("calendar of one store, longest affid", `/v1/sales/women/upcoming.ics?${key}&affid=${affid(30)}`);
  const product = material.paths.find((p) => p.startsWith("/v1/products/")) ?? "/v1/products/1/detail.json";
  add("product, 4,000 slashes", `/v1${"/".repeat(3900)}${product.slice(3)}?${key}`, [200, 404]);
  add("path of 1,300 escapes", `/v1/${"%41".repeat(1300)}?${key}`, [404]);
  add("64 parameters", `${list}?${key}${"&x=1".repeat(63)}`);
  add("65 parameters", `${list}?${key}${"&x=1".repeat(64)}`, [400]);
  add("request target past 4,096 bytes", `${list}?${key}&x=${"a".repeat(4100)}`, [414]);
  const headerCase = (name: string, headers: ReadonlyArray<readonly [string, string]>, expect = [200, 304]) =>
    cases.push({ name, target: `${list}?${key}`, headers, expect });
  headerCase("If-None-Match of 1,500 tags", [
    ["If-None-Match", Array.from({ length: 1500 }, (_, i) => `W/"${i}"`).join(", ")],
  ]);
  headerCase("Accept-Encoding of 1,000 codings", [
    ["Accept-Encoding", Array.from({ length: 1000 }, (_, i) => `c${i};q=0.${i % 10}`).join(",")],
  ]);
  headerCase(
    "100 headers of 150 bytes",
    Array.from({ length: 100 }, (_, i) => [`X-H${i}`, "v".repeat(150)] as const),
  );
  return cases;
}
