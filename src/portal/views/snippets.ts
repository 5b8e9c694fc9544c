// Requests to copy, in curl, JavaScript (fetch) and Python (urllib, the standard library): the active sales and a
// product search, the key in the X-Api-Key header. The new key's page fills in the key; other pages a placeholder.
import { html } from "hono/html";
import type { Html } from "./layout.ts";

/** What a page that does not know the key shows in its place. */
const KEY_PLACEHOLDER = "YOUR_API_KEY";

/** The three snippets' text, for the API at `apiUrl` and `key`. */
function snippetTexts(apiUrl: string, key: string): { id: string; title: string; code: string }[] {
  const sales = `${apiUrl}/v1/sales/active.json`;
  const search = `${apiUrl}/v1/products?q=boots&rows=5`;
  return [
    {
      id: "snippet-curl",
      title: "curl",
      code: `curl -H 'X-Api-Key: ${key}' '${sales}'
curl -H 'X-Api-Key: ${key}' '${search}'`,
    },
    {
      id: "snippet-js",
      title: "JavaScript (fetch, in Node 18 or later or a browser)",
      code: `const headers = { "X-Api-Key": "${key}" };
const res = await fetch("${search}", { headers });
if (!res.ok) throw new Error(\`\${res.status}: \${(await res.json()).detail}\`);
const page = await res.json();
console.log(page.total_found, "found:", page.products.map((p) => p.name));`,
    },
    {
      id: "snippet-python",
      title: "Python (the standard library)",
      code: `import json
import urllib.request

request = urllib.request.Request("${sales}", headers={"X-Api-Key": "${key}"})
with urllib.request.urlopen(request) as res:
    sales = json.load(res)["sales"]
for sale in sales:
    print(sale["begins"], sale["store"], sale["name"])`,
    },
  ];
}

/** The snippets, each with a copy button (shown by portal.js), for `key` (or the placeholder). */
export function snippets(apiUrl: string, key: string = KEY_PLACEHOLDER): Html {
  return html`<div class="snippets">
    <p>
      The key goes in the <code>X-Api-Key</code> header (or <code>Authorization: Bearer &lt;key&gt;</code>); the
      <code>apikey</code> query parameter also works, for what cannot set a header (<code>EventSource</code>, a JSONP
      script)${key === KEY_PLACEHOLDER ? html`. Put your key in place of <code>${KEY_PLACEHOLDER}</code>` : ""}.
    </p>
    ${snippetTexts(apiUrl, key).map(
      (s) =>
        html`<h3>${s.title}</h3>
          <pre id="${s.id}">${s.code}</pre>
          <p>
            <button type="button" class="secondary" data-copy="${s.id}" hidden>
              Copy the ${s.title.split(" ")[0]} code
            </button>
          </p>`,
    )}
  </div>`;
}
