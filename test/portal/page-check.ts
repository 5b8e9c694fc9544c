// What the browser tests check on every page: axe-core finds no violation (of any impact), and the page is no wider
// than the screen; a full-page screenshot is kept to be looked at. checkWidths does it at a desktop's and a phone's width.
// Also what they share to get there: a phone's browser that reports its problems, and signing in with a password.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { Browser, BrowserContextOptions, Page } from "playwright-core";

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
  for (const v of violations)
    problems.push(`${name}: ${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
  // Against the screen, not window.innerWidth: a phone's browser widens its layout viewport to a page too wide.
  const overflow = await page.evaluate<number>(`document.documentElement.scrollWidth - screen.width`);
  if (overflow > 0) problems.push(`${name}: ${overflow} px wider than the screen`);
  await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
  return problems;
}

/** A desktop's window, and a phone's (390 px, as an iPhone 12 to 15). */
export const WIDTHS = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } } as const;

/**
 * checkPage at a desktop's width (`<name>-desktop.png`) and then a phone's (`<name>-390.png`), where the page is left.
 * The page's context should be a phone's (isMobile), so that the narrow pass lays it out as a phone does.
 */
export async function checkWidths(page: Page, name: string, shots: string): Promise<string[]> {
  await page.setViewportSize(WIDTHS.desktop);
  const problems = await checkPage(page, `${name}-desktop`, shots);
  await page.setViewportSize(WIDTHS.phone);
  return [...problems, ...(await checkPage(page, `${name}-390`, shots))];
}

/**
 * A phone's browser (390 px, touch) with cookies of its own: its CSP refusals and script errors are added to
 * `problems`, and, when `elsewhere` is given, every URL its pages ask of another host to that.
 */
export async function openPhone(
  browser: Browser,
  problems: string[],
  elsewhere?: string[],
  options: BrowserContextOptions = {},
) {
  const context = await browser.newContext({ viewport: WIDTHS.phone, isMobile: true, hasTouch: true, ...options });
  const page = await context.newPage();
  if (elsewhere)
    page.on("request", (r) => {
      if (r.isNavigationRequest() || !/^https?:/.test(r.url())) return;
      if (new URL(r.url()).origin !== new URL(r.frame().url()).origin) elsewhere.push(r.url());
    });
  page.on("console", (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) problems.push(`CSP: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`script error: ${e.message}`));
  return { context, page };
}

/** Fills the portal's sign-in form at `portalUrl` with `email` and `password` and sends it (not the passkey's button). */
export async function signInWithPassword(page: Page, portalUrl: string, email: string, password: string) {
  await page.goto(`${portalUrl}/sign-in`);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
}
