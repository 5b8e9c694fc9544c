// What the portal's browser tests check on every page: axe-core finds nothing serious or critical, and the page is no
// wider than the phone's screen; a full-page screenshot is kept to be looked at.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { Page } from "playwright-core";

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** The page's problems as it is now (none: an empty list), with its screenshot written to `<shots>/<name>.png`. */
export async function checkPage(page: Page, name: string, shots: string): Promise<string[]> {
  const problems: string[] = [];
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate<AxeViolation[]>(
    `axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations)`,
  );
  for (const v of violations.filter((v) => v.impact === "serious" || v.impact === "critical"))
    problems.push(`${name}: ${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
  // Against the screen, not window.innerWidth: a phone's browser widens its layout viewport to a page too wide.
  const overflow = await page.evaluate<number>(`document.documentElement.scrollWidth - screen.width`);
  if (overflow > 0) problems.push(`${name}: ${overflow} px wider than the screen`);
  await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
  return problems;
}
