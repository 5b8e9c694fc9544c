// The npm scripts that run the server give node the options the server is measured with.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { SERVER_NODE_FLAGS } from "../../src/serve/http/server.ts";

const scripts = (
  JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
    scripts: Record<string, string>;
  }
).scripts;

describe("npm scripts", () => {
  it.each([
    ["start", "src/cli/start.ts"],
    ["serve", "src/cli/serve.ts"],
  ])("npm run %s runs %s with SERVER_NODE_FLAGS", (name, file) => {
    expect(SERVER_NODE_FLAGS.length).toBeGreaterThan(0);
    expect(scripts[name]).toBe(["tsx", ...SERVER_NODE_FLAGS, file].join(" "));
  });
});
