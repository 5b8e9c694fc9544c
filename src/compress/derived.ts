// What is worked out about a body once and kept for as long as the body lives: one record per body, in one WeakMap,
// so that a body let go (by the body cache, or a search page once sent) takes all of it along.
import type { LoadedBlob } from "../snapshot/load.ts";
import type { Composite } from "./assemble.ts";
import type { Insertable } from "./gzip-insert.ts";
import type { Element, Piece } from "./pieces.ts";

/** A body's derived state. Each field is undefined until it is first worked out (or registered) and then kept. */
export interface Derived {
  /** Its gzip pieces, split at its page links (piecesOf). */
  pieces: readonly Piece[] | undefined;
  /** Its pieces as one, with the CRC after a comma (elementOf). */
  element: Element | undefined;
  /** What inserting bytes at its links does to its gzip (insertableOf); null for a body whose gzip cannot take it. */
  insertable: Insertable | null | undefined;
  /** What it is made of, for a body made of other bodies (registerComposite). */
  composite: Composite | undefined;
}

const byBody = new WeakMap<LoadedBlob, Derived>();

/** The record of `body`, made (empty) on first use. */
export function derivedOf(body: LoadedBlob): Derived {
  let found = byBody.get(body);
  if (!found) {
    // Every field from the start: one hidden class for every record.
    found = { pieces: undefined, element: undefined, insertable: undefined, composite: undefined };
    byBody.set(body, found);
  }
  return found;
}

/** The record of `body` if one was made: a look that adds nothing. */
export function derivedIfAny(body: LoadedBlob): Derived | undefined {
  return byBody.get(body);
}
