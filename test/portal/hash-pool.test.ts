// The password hashes' bounded pool and parameters: at most the budget's worth of hashes run at once, a bounded queue
// waits, and the rest are refused at once; a hash larger than the budget runs alone; hashes of older parameters still
// verify and are marked for hashing again; the unknown email's stand-in hash is at the current parameters.
import { randomBytes, scryptSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createHashPool, HashingBusyError } from "../../src/portal/hash-pool.ts";
import { dummyHash, hashPassword, needsRehash, verifyPassword } from "../../src/portal/passwords.ts";

/** A job that runs until its `finish` is called, and says when it started. */
function job() {
  let finish = () => {};
  const state = { started: false };
  const work = () =>
    new Promise<string>((resolve) => {
      state.started = true;
      finish = () => resolve("done");
    });
  return { state, work, finish: () => finish() };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("the hashing pool", () => {
  it("runs 2 jobs of the budget at once, queues 3, refuses the 6th and later at once with its Retry-After", async () => {
    const pool = createHashPool({ budget: 2 * 16, queue: 3, retryAfter: 2 });
    const jobs = Array.from({ length: 10 }, job);
    const results = jobs.map((j) =>
      pool(16, j.work).then(
        (v) => v,
        (err: unknown) => err,
      ),
    );
    await settle();
    expect(jobs.map((j) => j.state.started)).toEqual([true, true, ...Array(8).fill(false)]);
    const refused = await Promise.all(results.slice(5));
    for (const err of refused) {
      expect(err).toBeInstanceOf(HashingBusyError);
      expect((err as HashingBusyError).retryAfter).toBe(2);
    }
    jobs[0]!.finish();
    await settle();
    expect(jobs.map((j) => j.state.started)).toEqual([true, true, true, false, false, ...Array(5).fill(false)]);
    for (let i = 1; i < 5; i++) {
      jobs[i]!.finish();
      await settle();
    }
    expect(await Promise.all(results.slice(0, 5))).toEqual(Array(5).fill("done"));
    // Drained: it takes jobs again.
    const again = job();
    const result = pool(16, again.work);
    await settle();
    expect(again.state.started).toBe(true);
    again.finish();
    expect(await result).toBe("done");
  });

  it("runs a job larger than the budget alone, and holds back the jobs queued behind it until it is done", async () => {
    const pool = createHashPool({ budget: 32, queue: 8, retryAfter: 1 });
    const small = job();
    const big = job();
    const after = job();
    const results = [pool(16, small.work), pool(128, big.work), pool(16, after.work)];
    await settle();
    expect([small.state.started, big.state.started, after.state.started]).toEqual([true, false, false]);
    small.finish();
    await settle();
    expect([big.state.started, after.state.started]).toEqual([true, false]);
    big.finish();
    await settle();
    expect(after.state.started).toBe(true);
    after.finish();
    expect(await Promise.all(results)).toEqual(["done", "done", "done"]);
  });

  it("frees a job's share when it throws", async () => {
    const pool = createHashPool({ budget: 16, queue: 1, retryAfter: 1 });
    await expect(pool(16, () => Promise.reject(new Error("broken")))).rejects.toThrow("broken");
    expect(await pool(16, () => Promise.resolve("next"))).toBe("next");
  });
});

describe("password hashes", () => {
  it("are made at 16 MiB (N=2^14, r=8, p=5) and verified", async () => {
    const hash = await hashPassword("correct horse battery");
    expect(hash).toMatch(/^scrypt\$16384\$8\$5\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(needsRehash(hash)).toBe(false);
    expect(await verifyPassword("correct horse battery", hash)).toBe(true);
    expect(await verifyPassword("correct horse batterY", hash)).toBe(false);
  }, 30_000);

  it("of the older parameters (N=2^17, r=8, p=1) still verify, and are marked for hashing again", async () => {
    const salt = randomBytes(16);
    const key = scryptSync("an old password", salt, 32, { N: 2 ** 17, r: 8, p: 1, maxmem: 256 * 2 ** 20 });
    const old = `scrypt$131072$8$1$${salt.toString("base64url")}$${key.toString("base64url")}`;
    expect(await verifyPassword("an old password", old)).toBe(true);
    expect(await verifyPassword("not the old one", old)).toBe(false);
    expect(needsRehash(old)).toBe(true);
  }, 30_000);

  it("read from the database are refused when their parameters are out of bounds, not run", async () => {
    for (const params of ["131071$8$1", "2097152$8$1", "16384$0$1", "16384$8$99", "x$8$1"])
      expect(await verifyPassword("pw", `scrypt$${params}$c2FsdHNhbHRzYWx0c2FsdA$aGFzaA`)).toBe(false);
  });

  it("for an unknown email is one of the current parameters, which no password matches", async () => {
    expect(needsRehash(dummyHash())).toBe(false);
    expect(dummyHash()).toMatch(/^scrypt\$16384\$8\$5\$/);
    expect(await verifyPassword("", dummyHash())).toBe(false);
  }, 30_000);
});
