// A running server and the keys CLI: a changed limit and a rotated key are picked up on reload; a grace period ends by the
// clock alone; a suspended account's key is refused with its own code (api_key_suspended) until reinstated.
import { execFile } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKey } from "../../../src/keys/keys-file.ts";
import { setAccountSuspended } from "../../../src/portal/operator-keys.ts";
import { createReloader } from "../../../src/serve/http/reloader.ts";
import type { Reloader } from "../../../src/serve/http/reloader.ts";
import { startTestApi } from "../../helpers/fixture.ts";
import type { TestApi } from "../../helpers/fixture.ts";

const { BASE_URL: _vite, ...env } = process.env;
/** Runs the real keys CLI against the server's keys file; resolves with its stdout (it must exit 0). */
const keys = (api: TestApi, ...args: string[]) =>
  new Promise<string>((resolve, reject) => {
    execFile(
      process.execPath,
      ["--import", "tsx", "src/cli/keys.ts", ...args],
      { encoding: "utf8", env: { ...env, KEYS_FILE: api.keysFile } },
      (err, stdout, stderr) => (err ? reject(new Error(`keys ${args.join(" ")}: ${stderr}`)) : resolve(stdout.trim())),
    );
  });

let api: TestApi;
let reloader: Reloader;
beforeAll(async () => {
  api = await startTestApi();
  // Checked by hand below rather than waited for: check() is what the 2-second timer calls.
  reloader = createReloader(api.handler, api.dataDir, api.keysFile, { interval: 3_600_000 });
});
afterAll(async () => {
  reloader.stop();
  await api.close();
});

const get = (key: string) => api.get(`/v1/sales/active.json?apikey=${key}`);

describe("keys changed under a running server", { timeout: 180_000 }, () => {
  it("applies a key's new rate limit after `set`", async () => {
    const key = await keys(api, "create", "limited", "--rate", "5", "--burst", "20");
    await reloader.check();
    const first = await get(key);
    expect(first.status).toBe(200);
    expect(first.headers.get("ratelimit-limit")).toBe("20");

    await keys(api, "set", "limited", "--rate", "5", "--burst", "7");
    await reloader.check();
    const after = await get(key);
    expect(after.status).toBe(200);
    expect(after.headers.get("ratelimit-limit")).toBe("7");

    await keys(api, "set", "limited", "--default");
    await reloader.check();
    expect((await get(key)).headers.get("ratelimit-limit")).toBe("200");
  });

  it("keeps the old key working through a rotation's grace period, and only the new one after it", async () => {
    const oldKey = await keys(api, "create", "rotating");
    await reloader.check();
    expect((await get(oldKey)).status).toBe(200);

    const before = Date.now();
    const newKey = await keys(api, "rotate", "rotating", "--grace", "1h");
    const after = Date.now();
    expect(newKey).toMatch(/^[A-Za-z0-9]{32}$/);
    await reloader.check();
    // The CLI dated the grace period by the wall clock: the server's injected clock is set around it.
    api.clock.now = Math.floor(before / 1000) + 3600 - 1;
    for (const key of [oldKey, oldKey, oldKey, newKey, newKey, newKey]) expect((await get(key)).status).toBe(200); // thrice: the remembered target too

    api.clock.now = Math.ceil(after / 1000) + 3600; // the file has not changed since: only the clock moved
    for (const key of [oldKey, oldKey]) {
      const refused = await get(key);
      expect(refused.status).toBe(401);
      expect(((await refused.json()) as { code: string; detail: string }).detail).toMatch(
        /replaced by a new key and its grace period has ended/,
      );
    }
    expect((await get(newKey)).status).toBe(200);

    // A second rotation with no grace: the key from the first is refused as soon as the server reloads.
    const third = await keys(api, "rotate", "rotating", "--grace", "0");
    expect((await get(newKey)).status).toBe(200);
    await reloader.check();
    expect((await get(newKey)).status).toBe(401);
    expect((await get(third)).status).toBe(200);
  });

  it("refuses a revoked key and the key it replaced, once reloaded", async () => {
    const first = await keys(api, "create", "leaving");
    const second = await keys(api, "rotate", "leaving", "--grace", "1h");
    await reloader.check();
    api.clock.now = Math.floor(Date.now() / 1000);
    expect((await get(first)).status).toBe(200);
    expect((await get(second)).status).toBe(200);
    await keys(api, "revoke", "leaving");
    await reloader.check();
    expect((await get(first)).status).toBe(401);
    expect((await get(second)).status).toBe(401);
  });

  it("refuses a suspended account's keys saying so (api_key_suspended), a revoked one as before, and takes them again once reinstated", async () => {
    // Two keys of one portal account (as the portal names them), one revoked; another account's key, untouched.
    const live = await createKey(api.keysFile, "p.acct1.live", new Date(), { rate: 1e9, burst: 1e9 });
    const gone = await createKey(api.keysFile, "p.acct1.gone", new Date(), { rate: 1e9, burst: 1e9 });
    const other = await createKey(api.keysFile, "p.acct2.other", new Date(), { rate: 1e9, burst: 1e9 });
    await keys(api, "revoke", "p.acct1.gone");
    await reloader.check();
    api.clock.now = Math.floor(Date.now() / 1000);
    expect((await get(live)).status).toBe(200);

    // The portal's operator suspends the account: its one live key is marked in the keys file.
    expect(await setAccountSuspended(api.keysFile, "acct1", true, Date.now())).toBe(1);
    await reloader.check();
    const problem = async (key: string) => {
      const res = await get(key);
      return { status: res.status, ...((await res.json()) as { code: string; detail: string }) };
    };
    for (let i = 0; i < 2; i++)
      // twice: the second is answered from what the ring remembers of the key
      expect(await problem(live)).toMatchObject({
        status: 401,
        code: "api_key_suspended",
        title: "API key suspended",
        detail: expect.stringMatching(/suspended account/) as unknown,
      });
    expect(await problem(gone)).toMatchObject({ status: 401, code: "api_key_invalid" });
    expect((await get(other)).status).toBe(200);
    // A stream too: the same answer.
    const stream = await api.get(`/v1/events?apikey=${live}`);
    expect(stream.status).toBe(401);
    expect(((await stream.json()) as { code: string }).code).toBe("api_key_suspended");

    expect(await setAccountSuspended(api.keysFile, "acct1", false, Date.now())).toBe(1);
    await reloader.check();
    expect((await get(live)).status).toBe(200);
    expect((await get(gone)).status).toBe(401);
  });
});
