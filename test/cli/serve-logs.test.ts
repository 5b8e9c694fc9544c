// The server as operators run it (`src/cli/serve.ts`, stdout to a file): request logs are buffered, and a graceful
// shutdown writes every line before the process exits.
import { once } from "node:events";
import { open, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createKey } from "../../src/keys/keys-file.ts";
import { buildStandardSnapshot, spawnServe, tempDir } from "../helpers/fixture.ts";

describe("npm run serve: request logs", () => {
  it("SIGTERM after 600 requests: 600 lines in the file, none with the key", async () => {
    const root = await tempDir();
    try {
      const dataDir = join(root, "data");
      const keysFile = join(root, "keys.json");
      await buildStandardSnapshot(root, dataDir);
      const key = await createKey(keysFile, "logs", new Date(), { rate: 1e9, burst: 1e9 });
      const logFile = join(root, "requests.log");
      const out = await open(logFile, "w");
      const child = spawnServe({ DATA_DIR: dataDir, KEYS_FILE: keysFile }, ["ignore", out.fd, "pipe"]);
      let stderr = "";
      const port = await new Promise<number>((resolve, reject) => {
        child.stderr!.on("data", (c: Buffer) => {
          stderr += c.toString();
          const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(stderr);
          if (m) resolve(Number(m[1]));
        });
        child.once("exit", (code) => reject(new Error(`server exited (${code}): ${stderr}`)));
      });
      const paths = [
        "/v1/sales/active.json",
        "/v1/products/1/detail.json",
        "/v1/products/999/detail.json",
        "/v1/products?q=boot",
      ];
      for (let i = 0; i < 600; i += 20) {
        await Promise.all(
          Array.from({ length: 20 }, (_, j) =>
            fetch(
              `http://127.0.0.1:${port}${paths[(i + j) % paths.length]}${(i + j) % 5 === 4 ? "" : `${paths[(i + j) % paths.length]!.includes("?") ? "&" : "?"}apikey=${key}`}`,
            ).then((r) => r.arrayBuffer()),
          ),
        );
      }
      child.kill("SIGTERM");
      const [code] = (await once(child, "exit")) as [number | null];
      await out.close();
      expect(code).toBe(0);
      const text = await readFile(logFile, "utf8");
      const lines = text.split("\n").filter(Boolean);
      expect(lines).toHaveLength(600);
      expect(text).not.toContain(key);
      const statuses = lines.map((l) => (JSON.parse(l) as { status: number }).status);
      expect(new Set(statuses)).toEqual(new Set([200, 401, 404]));
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  }, 60_000);
});
