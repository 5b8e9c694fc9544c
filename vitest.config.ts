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
    projects: [
      { test: { ...common, name: "unit", include: unit, setupFiles: ["test/unit-guard.ts", "test/setup.ts"] } },
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
