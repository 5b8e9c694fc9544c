// The reference page (/docs): the OpenAPI document rendered by `redocly build-docs` into one HTML file with Redoc's
// bundle inline, in a page template whose Content-Security-Policy lets it load nothing from any other host.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runRedocly } from "./redocly.ts";

/** The icon in the tab: the portal's (src/portal/favicon.ts), a white bolt on navy, as an SVG data URI. */
const ICON =
  "data:image/svg+xml," +
  encodeURIComponent(
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#12355b"/><polygon points="19,3 8,18 15,18 12,29 24,13 17,13 21,3" fill="#fff"/></svg>`,
  );

/**
 * What the page adds to Redoc's for every reader (axe-core finds nothing at a desktop's width or a phone's): a skip
 * link to the reference and a banner with the way to the developer portal, both landmarks; colours of enough
 * contrast where Redoc's theme has too little; and a script that, once Redoc has drawn the page, names its sidebar as
 * navigation and lets the keyboard reach (and so scroll) every box that scrolls. The script only adds attributes,
 * which React's hydration leaves alone.
 */
const ACCESS_STYLE = `
.fsa-skip{position:absolute;left:-999rem;top:.5rem;z-index:1000;padding:.6rem 1rem;background:#fff;color:#12355b;font:600 1rem system-ui,sans-serif;border-radius:.375rem}
.fsa-skip:focus{left:.5rem}
.fsa-banner{display:flex;flex-wrap:wrap;gap:.25rem 1rem;align-items:center;justify-content:space-between;padding:.5rem 1rem;background:#12355b;color:#fff;font:1rem/1.5 system-ui,sans-serif}
.fsa-banner a{color:#fff;font-weight:600}
.fsa-banner p{margin:0}
:focus-visible{outline:3px solid #ffbf47 !important;outline-offset:2px}
#redoc [data-testid=search-trigger] *{color:#4b5563}
#redoc main a:not([class]){color:#0b57d0}
`;
const ACCESS_SCRIPT = `
(function () {
  function mend() {
    var menu = document.querySelector(".menu-content");
    if (menu && !menu.getAttribute("role")) { menu.setAttribute("role", "navigation"); menu.setAttribute("aria-label", "Reference sections"); }
    var main = document.querySelector("#redoc main");
    if (main && !main.id) { main.id = "reference"; main.setAttribute("tabindex", "-1"); }
    var boxes = document.querySelectorAll("#redoc pre, #redoc table, #redoc [class*=code]");
    for (var i = 0; i < boxes.length; i++) {
      var box = boxes[i];
      if (box.hasAttribute("tabindex") || box.scrollWidth <= box.clientWidth && box.scrollHeight <= box.clientHeight) continue;
      box.setAttribute("tabindex", "0");
    }
  }
  var queued = false;
  function later() { if (!queued) { queued = true; requestAnimationFrame(function () { queued = false; mend(); }); } }
  new MutationObserver(later).observe(document.documentElement, { childList: true, subtree: true });
  addEventListener("resize", later);
  mend();
})();
`;

/** The page's template (handlebars, as build-docs takes it): the default one plus the policy and ACCESS_*. */
const template = (portalUrl: string | undefined) => `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8" />
  <meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:; font-src data:; worker-src blob:; connect-src 'self'; base-uri 'none'; form-action 'none'" />
  <title>{{title}}</title>
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <link rel="icon" href="${ICON}">
  <style>body { padding: 0; margin: 0; }${ACCESS_STYLE}</style>
  {{{redocHead}}}
</head>
<body>
  <a class="fsa-skip" href="#reference">Skip to the reference</a>
  <header class="fsa-banner">
    <p>Flash-sale API reference</p>
    ${portalUrl ? `<p><a href="${portalUrl}/">Developer portal</a>: sign up and get an API key</p>` : "<p>Keys are issued by the API's operator</p>"}
  </header>
  {{{redocHTML}}}
  <script>${ACCESS_SCRIPT}</script>
</body>
</html>
`;

/**
 * Redoc's sidebar shows Redocly's logo from their CDN (cdn.redoc.ly); the page shows the same words with no image
 * fetched: an SVG data URI in its place. Every other URL in the bundle is a link, not something it loads.
 */
const LOGO_URLS = ["https://cdn.redoc.ly/redoc/logo-mini-full.svg", "https://cdn.redoc.ly/redoc/logo-mini.svg"];
const LOGO =
  "data:image/svg+xml," +
  encodeURIComponent(
    `<svg xmlns="http://www.w3.org/2000/svg" width="60" height="16"><text x="0" y="12" font-family="sans-serif" font-size="12" fill="#666">Redocly</text></svg>`,
  );

/**
 * The reference page of `document` (the OpenAPI document's bytes), whose banner links to the developer portal at
 * `portalUrl` (if any). Takes a couple of seconds: run it only when the document changes.
 */
export async function renderDocsPage(document: Uint8Array, title: string, portalUrl?: string): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), "fsa-docs-"));
  try {
    await writeFile(join(dir, "openapi.json"), document);
    await writeFile(join(dir, "template.hbs"), template(portalUrl));
    const run = await runRedocly(
      ["build-docs", "openapi.json", "--inlineBundle", "-t", "template.hbs", "--title", title, "-o", "docs.html"],
      dir,
    );
    if (run.code !== 0) throw new Error(`redocly build-docs failed (exit ${run.code}): ${run.stderr || run.stdout}`);
    let html = await readFile(join(dir, "docs.html"), "utf8");
    for (const url of LOGO_URLS) {
      if (!html.includes(url)) throw new Error(`docs page: Redoc no longer loads ${url}; check what it loads now`);
      html = html.replaceAll(url, LOGO);
    }
    return Buffer.from(html);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Bumped when the page's making changes in a way the code digest cannot see. */
export const DOCS_PAGE_VERSION = 1;
