// GET /healthz: no key needed; 200 with the snapshot's ID, build time and age; 503 while no snapshot is loaded.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createKey } from "../../../src/keys/keys-file.ts";
import { createHandler } from "../../../src/serve/handler.ts";
import { startServer } from "../../../src/serve/http/server.ts";
import { SnapshotError } from "../../../src/snapshot/load.ts";
import { buildStandardSnapshot, startTestApi, T0, tempDir } from "../../helpers/fixture.ts";

describe("/healthz", () => {
  it("answers 200 with the snapshot and its age, without a key", async () => {
    const api = await startTestApi();
    try {
      api.clock.now = T0;
      const res = await api.get("/healthz");
      expect(res.status).toBe(200);
      expect(res.headers.get("cache-control")).toBe("no-store");
      const body = (await res.json()) as { status: string; snapshot: string; built_at: string; age_seconds: number };
      expect(body.status).toBe("ok");
      expect(body.snapshot).toBe(api.handler.snapshot().id);
      expect(body.age_seconds).toBe(Math.max(0, Math.floor(T0 - Date.parse(body.built_at) / 1000)));
    } finally {
      await api.close();
    }
  });

  it("fails at start-up without a snapshot, unless told to wait; then 503 until one is published", async () => {
    const root = await tempDir();
    const dataDir = join(root, "data");
    const keysFile = join(root, "keys.json");
    const key = await createKey(keysFile, "test");
    await expect(createHandler({ dataDir, keysFile })).rejects.toBeInstanceOf(SnapshotError);
    const handler = await createHandler({ dataDir, keysFile, waitForSnapshot: true });
    const server = await startServer(handler, "127.0.0.1", 0);
    try {
      const url = `http://127.0.0.1:${server.port}`;
      const down = await fetch(`${url}/healthz`);
      expect(down.status).toBe(503);
      expect(((await down.json()) as { status: string }).status).toBe("unavailable");
      // The key is checked before the snapshot: an unknown key is a 401 with or without one, a known key a 503.
      const unknown = await fetch(`${url}/v1/sales/active.json?apikey=${"A".repeat(32)}`);
      expect(unknown.status).toBe(401);
      const known = await fetch(`${url}/v1/sales/active.json?apikey=${key}`);
      expect(known.status).toBe(503);
      expect(known.headers.get("retry-after")).toBe("5");
      expect(((await known.json()) as { code: string }).code).toBe("service_unavailable");
      await buildStandardSnapshot(root, dataDir);
      await handler.reload();
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});
