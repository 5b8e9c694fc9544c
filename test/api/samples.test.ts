// The guide's samples (curl, JavaScript fetch, Python urllib), taken from the document the server sends and run
// against that server, so they cannot rot.
import { execFile } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { requireProgram } from "../../scripts/lib/test-programs.ts";
import { SAMPLE_KEY } from "../../src/api/guide.ts";
import { BASE, startTestApi, tempDir } from "../helpers/fixture.ts";
import type { TestApi } from "../helpers/fixture.ts";

const run = promisify(execFile);
// Installed by npm test's first step; if one is missing, the file fails naming it.
const PYTHON3 = requireProgram("python3");
requireProgram("curl"); // the sh samples' requests
let api: TestApi;
let samples: { lang: string; code: string }[];
beforeAll(async () => {
  api = await startTestApi();
  const doc = (await (await api.get("/v1/openapi.json")).json()) as { info: { description: string } };
  samples = [...doc.info.description.matchAll(/```(sh|js|python)\n([\s\S]*?)```/g)].map(([, lang, code]) => ({
    lang: lang!,
    // The document names the server it was built for (BASE); the samples run against the test's server.
    code: code!.replaceAll(BASE, api.url).replaceAll(SAMPLE_KEY, api.key),
  }));
});
afterAll(() => api.close());

const RUNNERS: Record<string, { file: string; command: string }> = {
  sh: { file: "sample.sh", command: "bash" },
  js: { file: "sample.mjs", command: process.execPath },
  python: { file: "sample.py", command: PYTHON3 },
};

it("the guide has samples in curl, JavaScript and Python", () => {
  expect(new Set(samples.map((s) => s.lang))).toEqual(new Set(["sh", "js", "python"]));
});

it("every sample runs against a live server without an error, and prints what it fetched", async () => {
  const dir = await tempDir("fsa-samples-");
  for (const [i, { lang, code }] of samples.entries()) {
    const { file, command } = RUNNERS[lang]!;
    const path = join(dir, `${i}-${file}`);
    await writeFile(path, lang === "sh" ? `set -euo pipefail\n${code}` : code);
    const { stdout } = await run(command, [path], { cwd: dir, timeout: 30_000 });
    expect(stdout.trim(), `${lang} sample ${i} printed nothing:\n${code}`).not.toBe("");
    if (code.includes("If-None-Match")) expect(stdout.trim()).toBe("304");
  }
});
