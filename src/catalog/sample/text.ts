// Small English helpers for generated copy: articles, lists, case, and URL slugs.
import { PROPER_WORDS } from "./vocabulary.ts";

/** "a" or "an" for the word that follows (by how it starts, which is right for this vocabulary). */
export function article(word: string): "a" | "an" {
  if (/^(heir|hour|hono)/i.test(word)) return "an";
  return /^[aeiou]/i.test(word) && !/^(u[nst]i|use|one|eu)/i.test(word) ? "an" : "a";
}

/** "a, b and c". */
export function listJoin(items: readonly string[]): string {
  if (items.length <= 1) return items.join("");
  return `${items.slice(0, -1).join(", ")} and ${items[items.length - 1] ?? ""}`;
}

export function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** A title-case phrase as it reads mid-sentence: "Cable Knit Crew Neck Sweater" -> "cable knit crew neck sweater", keeping "Chelsea". */
export function lowerPhrase(phrase: string): string {
  return phrase
    .split(" ")
    .map((word) => {
      if (PROPER_WORDS.has(word) || /^[A-Z0-9]{2,}/.test(word)) return word;
      // "V-Neck" -> "V-neck", "T-Shirt" -> "T-shirt"
      if (/^[A-Z]-/.test(word)) return word.slice(0, 2) + word.slice(2).toLowerCase();
      return word.toLowerCase();
    })
    .join(" ");
}

/** URL slug: ASCII letters and digits joined by single hyphens, accents folded ("Crêpe" -> "crepe"), cut at a word. */
export function slugify(text: string, maxLength = 60): string {
  const slug = text
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/&/g, " and ")
    .replace(/['\u2019]/g, "")
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
  if (slug.length <= maxLength) return slug;
  const cut = slug.slice(0, maxLength + 1);
  const lastHyphen = cut.lastIndexOf("-");
  return (lastHyphen > 0 ? cut.slice(0, lastHyphen) : slug.slice(0, maxLength)).replace(/-+$/, "");
}
