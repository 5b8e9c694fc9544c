// Which version of the keys descends from which (src/keys/history.ts), as tables of histories built the way Redis
// builds them: a change on a version, a copy given to an empty Redis. The forks of issue 32 (Redis emptied and given
// an older machine's copy; Redis restarted from an older snapshot and built on) are not in each other's history; a
// machine behind by more than the recent digests is still judged by its epochs. And the tombstones given back.
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { descends, givenHistory, isAncestor, nextHistory } from "../../src/keys/history.ts";
import type { Version } from "../../src/keys/history.ts";
import type { KeysFile } from "../../src/keys/keys-file.ts";
import { applyTombstones, tombstonesOf } from "../../src/keys/tombstones.ts";

const digest = (text: string) => createHash("sha256").update(text).digest("hex");
/** The version a change on `v` makes, with text `text`. */
const step = (v: Version, text: string): Version => ({
  change: v.change + 1,
  digest: digest(text),
  history: nextHistory(v, digest(text)),
});
/** `v` given to an empty Redis. */
const given = (v: Version): Version => ({ ...v, history: givenHistory(v) });
/** `count` changes on `v`, named `name-<n>`. */
const steps = (v: Version, name: string, count: number) => {
  for (let i = 0; i < count; i++) v = step(v, `${name}-${i}`);
  return v;
};

const root = given({ change: 0, digest: digest("no keys") });
const a1 = step(root, "k made");
const a2 = step(a1, "k revoked"); // A's copy
const b1 = given(a1); // B, down since a1, gives Redis its copy
const b2 = step(b1, "n made"); // and makes a key: "change 2" too
const a5 = steps(a2, "a", 3);
const a3 = steps(a2, "a", 1);
const restored4 = step(a3, "made on the restored snapshot"); // Redis restarted from a3, a change made on it
const far = steps(a2, "far", 100); // more changes than the recent digests hold
const forkFar = steps(b2, "b", 100);

describe("isAncestor: a version in another's history", () => {
  it.each([
    ["a version itself", a2, a2, true],
    ["the version before", a1, a2, true],
    ["a newer version", a2, a1, false],
    ["A's copy and B's new keys (both change 2)", a2, b2, false],
    ["B's new keys and A's copy", b2, a2, false],
    ["B's old copy and B's new keys", a1, b2, true],
    ["a copy given and not changed since, and a newer version of what it was given from", b1, a2, true],
    ["A ahead of a Redis restarted from an older snapshot and built on", a5, restored4, false],
    ["the same change number on either side of that restart", steps(a3, "a", 1), restored4, false],
    ["the snapshot's own version", a3, restored4, true],
    ["a copy 100 changes behind, in the same epoch", a2, far, true],
    ["a copy 100 changes behind the fork", a2, forkFar, false],
    ["the fork's common version, 100 changes behind", a1, forkFar, true],
    ["a version without a history", { change: 1, digest: a1.digest }, a2, false],
  ] as const)("%s: %s", (_what, x, y, expected) => {
    expect(isAncestor(x, y)).toBe(expected);
  });

  it("lets a copy without a history take any version (written by older code, or following a publisher)", () => {
    expect(descends({ change: 7, digest: a2.digest }, b2)).toBe(true);
    expect(descends(a2, b2)).toBe(false);
  });
});

describe("tombstones given back to forked keys", () => {
  const created = "2026-11-01T00:00:00.000Z";
  const hash = (n: number) => `sha256:${String(n).padStart(64, "0")}`;
  const ours: KeysFile = {
    format: 2,
    keys: [
      { name: "k", hash: hash(1), created, revoked: "2026-11-10T00:00:00.000Z" },
      { name: "r", hash: hash(2), created, revoked: "2026-11-10T00:00:00.000Z" },
      { name: "live", hash: hash(3), created },
    ],
  };

  it("revokes the same key by its hash, by a hash it replaced, or by its name if made before the revocation", () => {
    const theirs: KeysFile = {
      format: 2,
      keys: [
        { name: "k", hash: hash(1), created }, // the same key
        { name: "r", hash: hash(9), created, previous: [{ hash: hash(2), until: "2026-12-01T00:00:00.000Z" }] },
        { name: "live", hash: hash(3), created },
        { name: "other", hash: hash(4), created },
      ],
    };
    expect(applyTombstones(theirs, tombstonesOf(ours))).toBe(2);
    expect(theirs.keys.map((k) => [k.name, k.revoked ?? null, k.previous ?? null])).toEqual([
      ["k", "2026-11-10T00:00:00.000Z", null],
      ["r", "2026-11-10T00:00:00.000Z", null],
      ["live", null, null],
      ["other", null, null],
    ]);
    expect(applyTombstones(theirs, tombstonesOf(ours))).toBe(0); // given once: nothing more to change
  });

  it("leaves a key made under a revoked key's name after the revocation", () => {
    const theirs: KeysFile = { format: 2, keys: [{ name: "k", hash: hash(7), created: "2026-11-20T00:00:00.000Z" }] };
    expect(applyTombstones(theirs, tombstonesOf(ours))).toBe(0);
  });
});
