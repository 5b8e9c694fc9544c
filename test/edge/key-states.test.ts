// The keys as the fronts are told of them (src/edge/key-states.ts) as tables: the state of each hash a keys file
// names, and the changes a reload pushes between two versions of it.
import { describe, expect, it } from "vitest";
import { endGraces, keyChanges, keyStatesOf, nextGraceEnd } from "../../src/edge/key-states.ts";
import type { KeyRecord } from "../../src/keys/keys-file.ts";

const NOW = Date.parse("2026-11-27T12:00:00Z");
const LIMIT = { rate: 50, burst: 200 };
const h = (c: string) => `sha256:${c.repeat(64)}`;
const at = (ms: number) => new Date(NOW + ms).toISOString();
const record = (name: string, hash: string, more: Partial<KeyRecord> = {}): KeyRecord => ({
  name,
  hash,
  created: at(-86_400_000),
  ...more,
});
const valid = (name: string, rate = 50, burst = 200, until = Infinity) => ({ name, rate, burst, until });

describe("keyStatesOf: each hash's state", () => {
  it.each<[string, KeyRecord[], [string, ReturnType<typeof valid> | null][]]>([
    ["a live key, the server's limits", [record("a", h("a"))], [[h("a"), valid("a")]]],
    ["its own rate, burst 4 s of it", [record("a", h("a"), { rate: 2.5 })], [[h("a"), valid("a", 2.5, 10)]]],
    ["its own rate and burst", [record("a", h("a"), { rate: 5, burst: 7 })], [[h("a"), valid("a", 5, 7)]]],
    ["revoked", [record("a", h("a"), { revoked: at(-1) })], [[h("a"), null]]],
    [
      "suspended, its replaced key too",
      [record("a", h("a"), { suspended: at(-1), previous: [{ hash: h("b"), until: at(60_000) }] })],
      [
        [h("a"), null],
        [h("b"), null],
      ],
    ],
    [
      "rotated: the replaced key valid until its grace ends",
      [record("a", h("a"), { previous: [{ hash: h("b"), until: at(60_000) }] })],
      [
        [h("a"), valid("a")],
        [h("b"), valid("a", 50, 200, NOW + 60_000)],
      ],
    ],
    [
      "rotated: a grace that has ended",
      [record("a", h("a"), { previous: [{ hash: h("b"), until: at(0) }] })],
      [
        [h("a"), valid("a")],
        [h("b"), null],
      ],
    ],
  ])("%s", (_, records, expected) => {
    expect([...keyStatesOf(records, NOW, LIMIT)].map(([hash, s]) => [hash, s.valid])).toEqual(expected);
  });
});

describe("keyChanges: what a reload pushes", () => {
  const base = [record("a", h("a")), record("b", h("b"))];
  it.each<[string, KeyRecord[], [string, string | null][]]>([
    ["nothing changed", base, []],
    ["a key made", [...base, record("c", h("c"))], [[h("c"), "c"]]],
    ["a key revoked", [record("a", h("a"), { revoked: at(0) }), base[1]!], [[h("a"), null]]],
    ["a key suspended", [record("a", h("a"), { suspended: at(0) }), base[1]!], [[h("a"), null]]],
    ["a limit changed", [record("a", h("a"), { rate: 1 }), base[1]!], [[h("a"), "a"]]],
    ["a record dropped (a tombstone's end)", [base[1]!], [[h("a"), null]]],
    [
      "a rotation: the new hash valid, the old one's state now ends with its grace",
      [record("a", h("c"), { previous: [{ hash: h("a"), until: at(60_000) }] }), base[1]!],
      [
        [h("c"), "a"],
        [h("a"), "a"],
      ],
    ],
    [
      "a rotation with no grace: the old hash refused",
      [record("a", h("c")), base[1]!],
      [
        [h("c"), "a"],
        [h("a"), null],
      ],
    ],
  ])("%s", (_, after, expected) => {
    const changes = keyChanges(keyStatesOf(base, NOW, LIMIT), keyStatesOf(after, NOW, LIMIT));
    expect(changes.map((c) => [c.hash, c.valid?.name ?? null])).toEqual(expected);
  });

  it("ends a grace at its instant: the timer's change refuses the replaced key", () => {
    const states = keyStatesOf([record("a", h("a"), { previous: [{ hash: h("b"), until: at(60_000) }] })], NOW, LIMIT);
    expect(nextGraceEnd(states, NOW)).toBe(NOW + 60_000);
    expect(keyChanges(states, endGraces(states, NOW + 59_999))).toEqual([]);
    const ended = endGraces(states, NOW + 60_000);
    expect(keyChanges(states, ended)).toEqual([{ hash: h("b"), valid: null }]);
    expect(nextGraceEnd(ended, NOW + 60_000)).toBe(Infinity);
  });
});
