// A reload whose snapshot is refused still applies the keys file it read: a key revoked at the moment a broken
// snapshot is published is refused, while the previous snapshot goes on serving.
import { rename, symlink } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKey, revokeKey } from "../../../src/keys/keys-file.ts";
import { startTestApi, withKey } from "../../helpers/fixture.ts";
import type { TestApi } from "../../helpers/fixture.ts";

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api.close());

describe("reload with a refused snapshot", () => {
  it("revokes the key all the same, and keeps serving the previous snapshot", async () => {
    const other = await createKey(api.keysFile, "other", new Date(), { rate: 1e9, burst: 1e9 });
    const served = api.handler.snapshot().id;
    await revokeKey(api.keysFile, "test");
    // `current` now names a snapshot that does not exist: the load fails.
    await symlink("snapshots/no-such-snapshot", join(api.dataDir, "current.tmp"));
    await rename(join(api.dataDir, "current.tmp"), join(api.dataDir, "current"));
    await expect(api.handler.reload()).rejects.toThrow(/no-such-snapshot/);
    expect(api.handler.snapshot().id).toBe(served);
    const revoked = await api.get(withKey(api, "/v1/sales/active.json"));
    expect(revoked.status).toBe(401);
    const fine = await api.get(`/v1/sales/active.json?apikey=${other}`);
    expect(fine.status).toBe(200);
  });
});
