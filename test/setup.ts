// Runs in every test file before it: what tempDir (helpers/fixture.ts) made in the file is removed after its last
// hook (hooks run in reverse order of registration, so a file's own afterAll, which stops the servers and tools
// using them, runs first). The list is a global under this symbol, so that this file imports none of the helpers.
import { rm } from "node:fs/promises";
import { afterAll } from "vitest";

afterAll(async () => {
  const dirs = (globalThis as { [key: symbol]: string[] | undefined })[Symbol.for("flash-sale-api.testTempDirs")];
  await Promise.all((dirs?.splice(0) ?? []).map((dir) => rm(dir, { recursive: true, force: true })));
});
