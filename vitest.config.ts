import fg from "fast-glob";
import { defineConfig } from "vitest/config";
import { isUnitTest } from "./test/test-kinds.ts";

const unit = fg.sync("test/**/*.test.ts").filter(isUnitTest);
/** What every test file shares (a project inherits nothing from the root's `test`). */
const common = { testTimeout: 60_000, hookTimeout: 120_000 };

// Two projects: `unit` (no process, server, daemon or browser: `npm run test:unit`, seconds) and `system` (the rest:
// real servers, Redis, PostgreSQL, SMTP, nginx, Varnish, Chromium). `npm test` runs both.
export default defineConfig({
  test: {
    // Threads (the unit project's pool only) share their module graph between files; the system project's forks stay
    // isolated. (Set here: vitest 3.2 reads a pool's isolation from the root's poolOptions.)
    poolOptions: { threads: { isolate: false } },
    projects: [
      {
        // Worker threads sharing their module graph (no isolation per file): the unit tests start nothing and keep no
        // state between files, and a fresh process and module graph per file was half of their time (34-36 s -> 18-22 s).
        test: {
          ...common,
          name: "unit",
          include: unit,
          setupFiles: ["test/unit-guard.ts", "test/setup.ts"],
          pool: "threads",
        },
      },
      {
        test: {
          ...common,
          name: "system",
          include: ["test/**/*.test.ts"],
          exclude: unit,
          setupFiles: ["test/setup.ts"],
        },
      },
    ],
  },
});
