// The keys as the fronts are told of them (front.ts's KeyState), made from the keys file's records, and the changes
// between two versions of them: what a keys reload pushes to the fronts (pusher.ts).
import type { KeyRecord } from "../keys/keys-file.ts";
import type { KeyState } from "./front.ts";

/** Requests a second and burst of a key whose record sets none (the server's keyLimit). */
interface Limit {
  rate: number;
  burst: number;
}

/**
 * Every hash the records name, with its state at `nowMs`: a live key's hash and a replaced key's (until its grace
 * ends) valid; a revoked or suspended key's hashes, and a replaced key's past its grace, refused (null). A hash the
 * records no longer name (a tombstone dropped) is not there: the diff reports it refused.
 */
export function keyStatesOf(records: readonly KeyRecord[], nowMs: number, keyLimit: Limit): Map<string, KeyState> {
  const states = new Map<string, KeyState>();
  for (const r of records) {
    const refused = r.revoked !== undefined || r.suspended !== undefined;
    const rate = r.rate ?? keyLimit.rate;
    const burst = r.rate === undefined ? keyLimit.burst : (r.burst ?? Math.max(1, Math.ceil(r.rate * 4)));
    states.set(r.hash, { hash: r.hash, valid: refused ? null : { name: r.name, rate, burst, until: Infinity } });
    for (const p of r.previous ?? []) {
      const until = Date.parse(p.until);
      const valid = refused || until <= nowMs ? null : { name: r.name, rate, burst, until };
      states.set(p.hash, { hash: p.hash, valid });
    }
  }
  return states;
}

const same = (a: KeyState["valid"], b: KeyState["valid"]) =>
  a === b ||
  (a !== null && b !== null && a.name === b.name && a.rate === b.rate && a.burst === b.burst && a.until === b.until);

/** The states that differ from `before` to `after`: added, changed, and gone (as refused). */
export function keyChanges(before: ReadonlyMap<string, KeyState>, after: ReadonlyMap<string, KeyState>): KeyState[] {
  const changes: KeyState[] = [];
  for (const [hash, state] of after) {
    const old = before.get(hash);
    if (!old || !same(old.valid, state.valid)) changes.push(state);
  }
  for (const hash of before.keys()) if (!after.has(hash)) changes.push({ hash, valid: null });
  return changes;
}

/** The first instant after `nowMs` at which a replaced key's grace ends (Infinity when none runs). */
export function nextGraceEnd(states: ReadonlyMap<string, KeyState>, nowMs: number): number {
  let next = Infinity;
  for (const s of states.values()) if (s.valid && s.valid.until > nowMs && s.valid.until < next) next = s.valid.until;
  return next;
}

/** `states` with every grace that has ended by `nowMs` refused: what the states are at `nowMs`. */
export function endGraces(states: ReadonlyMap<string, KeyState>, nowMs: number): Map<string, KeyState> {
  const next = new Map(states);
  for (const [hash, s] of states) if (s.valid && s.valid.until <= nowMs) next.set(hash, { hash, valid: null });
  return next;
}
