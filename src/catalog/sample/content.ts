// The `content` block of a sample product: description plus fit notes, fibre content, care and origin.
import type { z } from "zod";
import type { ContentSchema } from "../schema.ts";
import type { CopySubject } from "./copy.ts";
import { renderDescription } from "./copy.ts";
import type { Random } from "./random.ts";
import { itemAt, zipfPick } from "./random.ts";
import { APPAREL_FIT, MODEL_HEIGHTS, ORIGINS, SHOE_FIT } from "./vocabulary.ts";

export type ProductContent = z.infer<typeof ContentSchema>;

const HEELS = ["0.5", "1", "1.5", "2", "2.5", "3", "3.5", "4"] as const;

/** Builds the content block; optional fields are left out now and then, as real feeds do. */
export function renderContent(rng: Random, subject: CopySubject): ProductContent {
  const content: ProductContent = { description: renderDescription(rng, subject) };
  const fit = renderFitNotes(rng, subject);
  if (fit !== undefined && rng.chance(0.85)) content.fit_notes = fit;
  if (rng.chance(0.93)) content.material = zipfPick(rng, subject.material.contents);
  if (rng.chance(subject.type.fit === "jewelry" ? 0.6 : 0.82))
    content.care_instructions = zipfPick(rng, subject.material.care);
  if (rng.chance(0.85)) content.origin = zipfPick(rng, ORIGINS, 1.2);
  return content;
}

function renderFitNotes(rng: Random, { store, type, sizes }: CopySubject): string | undefined {
  const parts: string[] = [];
  switch (type.fit) {
    case "top":
    case "dress":
    case "bottom":
      parts.push(store === "kids" ? zipfPick(rng, KIDS_FIT) : zipfPick(rng, APPAREL_FIT));
      if (type.fit === "dress" && rng.chance(0.5)) parts.push(`Approx. ${rng.int(34, 58)}" from shoulder to hem.`);
      if (
        type.fit === "bottom" &&
        store !== "kids" &&
        /Pant|Jean|Chino|Trouser|Jogger/.test(type.noun) &&
        rng.chance(0.5)
      )
        parts.push(`Inseam: ${rng.int(27, 34)}".`);
      if (store !== "kids" && sizes.length > 0 && rng.chance(0.5)) {
        const size = itemAt(sizes, Math.floor(sizes.length / 2));
        parts.push(`Model is ${zipfPick(rng, MODEL_HEIGHTS)} and wears a size ${size}.`);
      }
      break;
    case "shoe":
      parts.push(zipfPick(rng, SHOE_FIT));
      break;
    case "heel":
      parts.push(zipfPick(rng, SHOE_FIT), `Heel height: ${rng.pick(HEELS)}".`);
      break;
    case "boot":
      parts.push(zipfPick(rng, SHOE_FIT), `Shaft height: ${rng.int(4, 16)}"; heel height: ${rng.pick(HEELS)}".`);
      break;
    case "bag":
    case "jewelry":
    case "watch":
    case "dims":
      if (type.dims && type.dims.length > 0) parts.push(rng.pick(type.dims));
      break;
    case "none":
      break;
  }
  return parts.length > 0 ? parts.join(" ") : undefined;
}

const KIDS_FIT = [
  "Fits true to size.",
  "Roomy fit with room to grow.",
  "Slim fit; consider sizing up.",
  "Snug fit for safety.",
] as const;
