// The generated OpenAPI document passes `redocly lint` with its recommended rules (redocly.yaml), warnings included.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { sampleExamples } from "../../src/generate/sample-examples.ts";
import { createOpenApiDocument } from "../../src/api/openapi.ts";
import { runRedocly } from "../../src/api/redocly.ts";
import { BASE } from "../helpers/fixture.ts";

it("passes redocly lint (recommended), with no warnings", async () => {
  const dir = await mkdtemp(join(tmpdir(), "fsa-lint-"));
  try {
    const doc = createOpenApiDocument({ baseUrl: BASE, examples: await sampleExamples(BASE) });
    await writeFile(join(dir, "openapi.json"), JSON.stringify(doc, null, 2));
    const config = join(import.meta.dirname, "../../redocly.yaml");
    const run = await runRedocly(["lint", "openapi.json", "--config", config], dir);
    const output = `${run.stdout}${run.stderr}`;
    console.log(output.replace(/^.*[║╔╚].*\n/gm, "").trim());
    expect(output).toContain("Your API description is valid");
    expect(output).not.toMatch(/You have \d+ warning/);
    expect(run.code).toBe(0);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
