// The reference page (/docs): the OpenAPI document rendered by `redocly build-docs` into one HTML file with Redoc's
// bundle inline, in a page template whose Content-Security-Policy lets it load nothing from any other host.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runRedocly } from "./redocly.ts";

/** The page's template (handlebars, as build-docs takes it): the default one plus the policy. */
const TEMPLATE = `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8" />
  <meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:; font-src data:; worker-src blob:; connect-src 'self'; base-uri 'none'; form-action 'none'" />
  <title>{{title}}</title>
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <style>body { padding: 0; margin: 0; }</style>
  {{{redocHead}}}
</head>
<body>
  {{{redocHTML}}}
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

/** The reference page of `document` (the OpenAPI document's bytes). Takes a couple of seconds: run it only when the document changes. */
export async function renderDocsPage(document: Uint8Array, title: string): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), "fsa-docs-"));
  try {
    await writeFile(join(dir, "openapi.json"), document);
    await writeFile(join(dir, "template.hbs"), TEMPLATE);
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
